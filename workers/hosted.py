"""Hosted bots on the ladder: from a stored version to a sandboxed seat, and back to the ladder.

The Django-aware side of ``workers.sandbox`` (which knows no Django): the
sandbox's limits and mode from settings, a version's archive from storage as a
``Bundle``, the hosted seats of a match. Used by seat dialing
(``workers.seats``) and by the smoke match of a new version (``workers.smoke``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from pathlib import PurePosixPath

from django.conf import settings

from ladder.bots.models import Bot, BotVersion
from ladder.common.exceptions import Conflict
from ladder.matches.models import MatchSeat
from workers.sandbox import (
    Bundle,
    HostedSeat,
    SandboxConfig,
    SandboxLimits,
    hosted_seats,
    sandbox_check,
    worker_mode,
)
from workers.sandbox.cgroups import cgroup_support

log = logging.getLogger("workers.hosted")


def sandbox_settings() -> tuple[SandboxLimits, SandboxConfig]:
    """The sandbox as the ladder's settings configure it."""
    first, _, last = settings.LADDER_SANDBOX_UIDS.partition("-")
    limits = SandboxLimits(
        cpu_s=settings.LADDER_SANDBOX_CPU_S,
        memory_bytes=settings.LADDER_SANDBOX_MEMORY_MB * 1024 * 1024,
        start_s=settings.LADDER_SANDBOX_START_S,
        log_bytes=settings.LADDER_SANDBOX_LOG_BYTES,
        cpus=settings.LADDER_SANDBOX_CPUS,
    )
    config = SandboxConfig(
        unsafe_dev_mode=settings.LADDER_SANDBOX_UNSAFE_DEV_MODE,
        uids=range(int(first), int(last or first) + 1),
        cgroup=settings.LADDER_SANDBOX_CGROUP,
    )
    return limits, config


def sandbox_status() -> dict[str, str]:
    """How this worker runs hosted bots: for its start-up log and its health probe.

    ``sandbox``: ``sandbox_mode()`` ("root", "userns", "unsafe" or "none": then ``why``);
    ``seccomp``: the system-call filter ("on" whenever the sandbox runs);
    ``resources``: the cgroup mode ("cgroup", "cgroup-accounting", "rlimits") and
    ``resources_detail`` what it means here.
    """
    _, config = sandbox_settings()
    reason = sandbox_check(config)
    support = cgroup_support(config.cgroup)
    return {
        "sandbox": sandbox_mode(),
        "why": reason,
        "seccomp": "off" if reason else "on",
        "resources": support.mode,
        "resources_detail": support.describe(),
        "hosted_clock": settings.LADDER_MATCH_HOSTED_CLOCK,
    }


def log_sandbox_status() -> dict[str, str]:
    """One start-up line saying how hosted bots will run on this worker."""
    status = sandbox_status()
    log.info(
        "hosted bots: sandbox %s%s, seccomp %s, resources: %s; hosted seats charged %s time",
        status["sandbox"],
        f" ({status['why']})" if status["why"] else "",
        status["seccomp"],
        status["resources_detail"],
        status["hosted_clock"],
    )
    return status


def hosted_refusal() -> str:
    """Why this process cannot play hosted bots ("" when it can)."""
    _, config = sandbox_settings()
    reason = sandbox_check(config)
    if reason and not config.unsafe_dev_mode:
        return refusal_text(reason)
    return ""


def refusal_text(reason: str) -> str:
    """The refusal for ``reason``. "install bubblewrap" only when that is the cause: in a
    container it is installed and the cause is what the container refuses (the reason
    names it, ``workers.sandbox.launcher.explain_failure``)."""
    install = "install bubblewrap; " if "is not installed" in reason else ""
    return (
        f"hosted bots cannot run here: {reason} ({install}for development "
        "only, LADDER_SANDBOX_UNSAFE_DEV_MODE=1 runs them without isolation)"
    )


def sandbox_mode() -> str:
    """How this process runs hosted bots: "root" or "userns" (bubblewrap), "unsafe"
    (development mode, no isolation) or "none" (it cannot)."""
    _, config = sandbox_settings()
    if sandbox_check(config):
        return "unsafe" if config.unsafe_dev_mode else "none"
    return worker_mode()


def version_bundle(version: BotVersion) -> Bundle:
    """A hosted version's upload, read back from storage."""
    with version.archive.open("rb") as fh:
        data = fh.read()
    filename = PurePosixPath(version.archive.name).name
    return Bundle(filename, data, version.entry_point if filename.endswith(".zip") else "")


@contextlib.contextmanager
def match_hosted_seats(seats: Sequence[MatchSeat]) -> Iterator[dict[int, HostedSeat]]:
    """Start the hosted seats among ``seats`` (by seat number) for one match."""
    hosted = [s for s in seats if s.bot.kind == Bot.Kind.HOSTED]
    if hosted and (why := hosted_refusal()):
        raise Conflict(why)
    limits, config = sandbox_settings()
    with hosted_seats([version_bundle(s.version) for s in hosted], limits, config) as started:
        yield {s.seat: h for s, h in zip(hosted, started, strict=True)}
