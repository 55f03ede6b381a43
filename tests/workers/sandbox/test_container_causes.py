"""The worker's message names the real cause when bubblewrap cannot run in a container.

The worker in the shipped compose logged "bubblewrap cannot create the sandbox ...
cannot open /proc/sys/user/max_user_namespaces: Read-only file system" and then told
the operator to install bubblewrap, which was installed. The messages below are the
ones bubblewrap printed in Docker containers (20.10, runc, non-root worker) under each
setting tried; each must name what to change, and none may say to install it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workers.hosted import refusal_text
from workers.sandbox import launcher

SEEN_IN_CONTAINERS = {
    "bwrap: cannot open /proc/sys/user/max_user_namespaces: Read-only file system": "read-only",
    "bwrap: No permissions to create new namespace, likely because the kernel does not "
    "allow non-privileged user namespaces.": "seccomp=unconfined",
    "bwrap: Can't mount proc on /newroot/proc: Operation not permitted": "systempaths=unconfined",
    "bwrap: pivot_root: Operation not permitted": "seccomp=unconfined",
}


@pytest.mark.parametrize("stderr", sorted(SEEN_IN_CONTAINERS))
def test_each_container_failure_names_its_cause(stderr: str) -> None:
    cause = launcher.explain_failure(stderr)
    assert SEEN_IN_CONTAINERS[stderr] in cause, cause
    assert "install" not in cause


def test_disable_userns_only_where_the_limit_can_be_written(tmp_path: Path) -> None:
    """bubblewrap's --disable-userns writes max_user_namespaces, which a container mounts
    read-only; the seat's seccomp filter refuses new namespaces either way."""
    writable = tmp_path / "max_user_namespaces"
    writable.write_text("100\n")
    assert launcher.userns_limit_writable(writable)
    assert not launcher.userns_limit_writable(tmp_path / "absent")
    real = launcher.MAX_USERNS
    assert launcher.userns_limit_writable() == os.access(real, os.W_OK)


def test_the_refusal_says_install_bubblewrap_only_when_it_is_missing() -> None:
    for reason, install in (
        ("bubblewrap (bwrap) is not installed", True),
        ("bubblewrap cannot create the sandbox (exit 1): bwrap: cannot open "
         "/proc/sys/user/max_user_namespaces: Read-only file system", False),
    ):  # fmt: skip
        refusal = refusal_text(reason)
        assert reason in refusal
        assert ("install bubblewrap" in refusal) is install, refusal
