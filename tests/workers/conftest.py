"""Real processes shared by the workers tests (runner, sandbox): the engine server.

How they are started, waited on and stopped is tests/support/processes.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Proc, start_engine


@pytest.fixture(scope="session")
def procdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("procs")


@pytest.fixture(scope="session")
def engine(procdir: Path) -> Iterator[Proc]:
    p = start_engine(procdir)
    yield p
    p.stop()
