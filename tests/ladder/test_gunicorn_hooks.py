"""The web workers' garbage-collector hooks in ``ladder/gunicorn.conf.py``: what is alive
once the application is loaded, and again after the first requests, is frozen (out of
the full collections that were 80-100 ms inside a request), each point once."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

CONFIG = Path(__file__).resolve().parents[2] / "ladder" / "gunicorn.conf.py"


@pytest.fixture
def hooks() -> Iterator[dict[str, Any]]:
    namespace: dict[str, Any] = {"__file__": str(CONFIG)}
    exec(compile(CONFIG.read_text(), str(CONFIG), "exec"), namespace)
    gc.unfreeze()
    yield namespace
    gc.unfreeze()  # the test process collects as before


def test_a_worker_freezes_after_loading_and_after_its_first_requests(
    hooks: dict[str, Any],
) -> None:
    worker = SimpleNamespace(nr=0)
    kept = [[i] for i in range(1000)]  # tracked objects alive at each point
    hooks["post_worker_init"](worker)
    frozen = gc.get_freeze_count()
    assert frozen >= len(kept)
    points = hooks["GC_FREEZE_AFTER_REQUESTS"]
    seen = []
    for n in range(1, points[-1] + 50):
        worker.nr = n
        kept.append([n])
        hooks["post_request"](worker, None, {}, None)
        if gc.get_freeze_count() > frozen:
            seen.append(n)
            frozen = gc.get_freeze_count()
    assert seen == list(points)
