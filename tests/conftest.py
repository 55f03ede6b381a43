"""Fixtures for every test.

No test sends Celery messages to a developer's broker or into the checkout's
``var/broker``: the whole run gets an embedded broker in a temporary
directory, unless a test configures its own (``tests/support/broker.py``).

``make test`` runs the suite in parallel (pytest-xdist, ``--dist loadgroup``): each
test file is one group, so a module's fixtures (a played ladder, a server) are made
once, and ``tests/cluster`` is one group (its seven-machine stack is made once per
session). Where PostgreSQL is reachable the suites of ``POSTGRES_SUITES`` run on it,
production's database, and not again on SQLite (see the Makefile's ``test``).

The suite's ladders rate with Elo (``LADDER_RATING_SYSTEM=elo``, in this
process and in the processes it starts), whose figures are exact integers the
tests can state; the other systems are tested by name
(``tests/ladder/test_rating_systems.py``) on ladders configured with them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import override_settings

from ladder.settings import celery_broker
from tests.support import reaper

os.environ.setdefault("LADDER_RATING_SYSTEM", "elo")

# The database-backed suites whose behaviour can depend on the vendor (locks, claims,
# queries with a PostgreSQL branch, the pages' queries): marked ``postgres_suite``.
# ``make test`` runs them on PostgreSQL and, on SQLite, only their tests marked
# ``sqlite_too`` (a path that differs on the development database) or ``vendor_neutral``.
POSTGRES_SUITES = (
    "tests/ladder/",
    "tests/workers/cluster/",
    "tests/workers/test_claims.py",
    "tests/web/test_pages.py",
    "tests/browser/test_site.py",
)
# Groups of tests that share a session's fixtures and must stay on one xdist worker.
SESSION_GROUPS = ("tests/cluster/",)


def pytest_configure(config: pytest.Config) -> None:
    reaper.stop_on_sigterm()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The net under every fixture's teardown: nothing this run started outlives it."""
    left = reaper.reap()
    if left:
        print(f"\n[reaper] stopped {len(left)} process(es) the run left behind: {left}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the PostgreSQL suites, and group the tests for ``--dist loadgroup``.

    Runs after pytest-django's reordering (it is ``tryfirst``) and before xdist reads
    the groups (``trylast``). One group per file keeps module-scoped fixtures made
    once; a session-scoped stack needs its whole folder on one worker.
    """
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if path.startswith(POSTGRES_SUITES):
            item.add_marker(pytest.mark.postgres_suite)
        group = next((g for g in SESSION_GROUPS if path.startswith(g)), path)
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session", autouse=True)
def _elo_ladders() -> Iterator[None]:
    with override_settings(LADDER_RATING_SYSTEM=os.environ["LADDER_RATING_SYSTEM"]):
        yield


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashes() -> Iterator[None]:
    """Users made in the test process get cheap hashes of the production algorithm.

    Every ``create_user`` and sign-in costs a full PBKDF2 otherwise; the limits and
    hash counts of sign-ins are tested with their own hasher (tests/support/hashers.py).
    """
    hashers = ["tests.support.hashers.FastPBKDF2PasswordHasher", *settings.PASSWORD_HASHERS]
    with override_settings(PASSWORD_HASHERS=hashers):
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
