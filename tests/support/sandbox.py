"""Whether hosted bots can be sandboxed here: tests skip without it, except in CI."""

from __future__ import annotations

import os

import pytest

from workers.sandbox import sandbox_check


def require_sandbox() -> None:
    """Skip the calling test when bubblewrap cannot run; fail instead under ``CI=true``."""
    reason = sandbox_check()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the sandbox must run in CI: {reason}")
        pytest.skip(f"no sandbox here: {reason}")
