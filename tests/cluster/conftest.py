"""The cluster of the drills: one per test session, torn down even when a drill fails.

Not root (or no iproute2): every namespace test skips with the reason; under
``CI=true`` (CI runs as root) that is a failure instead. The drills' table
(requested, finished, errored, lost, doubled, stuck, rated by the infrastructure,
recovery time) is printed at the end and written to ``$CLUSTER_REPORT`` when set.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from tests.cluster.netns import NetnsUnavailable, check_netns, leftover_namespaces
from tests.cluster.stack import Stack, open_stack, remove_tmp

PREFIX = f"ddl{os.getpid() % 100000}-"


@dataclass
class DrillRow:
    drill: str
    requested: int
    finished: int
    errored: int
    lost: int
    doubled: int
    stuck: int
    rated_by_infrastructure: int
    recovery_s: float
    minutes: float  # from the first match created to the last one settled

    @property
    def per_min(self) -> float:
        return self.finished / self.minutes if self.minutes else 0.0


ROWS: list[DrillRow] = []


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    try:
        check_netns()
    except NetnsUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the cluster drills must run in CI: {exc}")
        pytest.skip(str(exc))
    made = open_stack(PREFIX)
    try:
        yield made
    finally:
        left = made.close()
        namespaces = leftover_namespaces(PREFIX)
        _report()
        if left or namespaces:
            # Not an assertion in a finalizer (it would hide the drill's own failure),
            # but loud: a leak is a bug of the harness or of a process's shutdown.
            print(f"\ncluster: processes still running at teardown {left}, "
                  f"namespaces left {namespaces}", file=sys.stderr)  # fmt: skip
        if os.environ.get("CLUSTER_KEEP") == "1":
            print(f"\ncluster: logs kept in {made.tmp}", file=sys.stderr)
        else:
            remove_tmp(made)


def _report() -> None:
    if not ROWS:
        return
    head = ("drill", "requested", "finished", "errored", "lost", "doubled", "stuck",
            "rated by infra", "recovery s", "matches/min")  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in ROWS:
        lines.append(
            f"| {r.drill} | {r.requested} | {r.finished} | {r.errored} | {r.lost} | "
            f"{r.doubled} | {r.stuck} | {r.rated_by_infrastructure} | {r.recovery_s:.1f} | "
            f"{r.per_min:.0f} |"
        )
    print("\n" + "\n".join(lines), file=sys.stderr)
    path = os.environ.get("CLUSTER_REPORT")
    if path:
        Path(path).write_text(
            json.dumps([asdict(r) | {"per_min": r.per_min} for r in ROWS], indent=1)
            + "\n\n"
            + "\n".join(lines)
            + "\n"
        )
