"""Fixtures for every test.

No test sends Celery messages to a developer's broker or into the checkout's
``var/broker``: the whole run gets an embedded broker in a temporary
directory, unless a test configures its own (``tests/support/broker.py``).

The suite's ladders rate with Elo (``LADDER_RATING_SYSTEM=elo``, in this
process and in the processes it starts), whose figures are exact integers the
tests can state; the other systems are tested by name
(``tests/ladder/test_rating_systems.py``) on ladders configured with them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from django.test import override_settings

from ladder.settings import celery_broker

os.environ.setdefault("LADDER_RATING_SYSTEM", "elo")


@pytest.fixture(scope="session", autouse=True)
def _elo_ladders() -> Iterator[None]:
    with override_settings(LADDER_RATING_SYSTEM=os.environ["LADDER_RATING_SYSTEM"]):
        yield


@pytest.fixture(scope="session", autouse=True)
def _test_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    url, transport, options = celery_broker({}, tmp_path_factory.mktemp("broker"), 600)
    with override_settings(
        CELERY_BROKER_URL=url,
        CELERY_BROKER_TRANSPORT=transport,
        CELERY_BROKER_TRANSPORT_OPTIONS=options,
    ):
        yield
