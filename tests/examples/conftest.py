"""Bots written from the docs alone, played over real gRPC against the house bots.

Each match is `python -m workers.play` (tests/support/matches.py) against the
runner tests' real engine process and random house bots, shared for the session.
"""

from tests.workers.runner.conftest import engine, procdir, random_bots  # noqa: F401
