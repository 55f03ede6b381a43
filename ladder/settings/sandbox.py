"""Hosted bots' sandbox (docs/sandbox.md): identities, limits and the cgroup of each seat."""

from __future__ import annotations

from ladder.settings.environment import Environment

env = Environment("hosted bots' sandbox")

LADDER_SANDBOX_UNSAFE_DEV_MODE = env.flag(
    "LADDER_SANDBOX_UNSAFE_DEV_MODE",
    False,
    why="runs hosted bots WITHOUT isolation where the sandbox cannot run; development only",
)
LADDER_SANDBOX_UIDS = env.text(
    "LADDER_SANDBOX_UIDS",
    "2000000000-2000099999",
    why="uids for the hosted bots of a root worker, one per seat",
)
LADDER_SANDBOX_START_S = env.number(
    "LADDER_SANDBOX_START_S", 15, unit="s", why="a hosted bot has this long to serve"
)
LADDER_SANDBOX_CPU_S = env.integer(
    "LADDER_SANDBOX_CPU_S", 300, unit="s", why="CPU one hosted seat may use in a match (rlimit)"
)
LADDER_SANDBOX_MEMORY_MB = env.integer(
    "LADDER_SANDBOX_MEMORY_MB", 1024, unit="MiB", why="address space of one hosted seat"
)
LADDER_SANDBOX_LOG_BYTES = env.integer(
    "LADDER_SANDBOX_LOG_BYTES", 65536, unit="bytes", why="output kept per hosted seat and match"
)
LADDER_SANDBOX_CGROUP = env.text(
    "LADDER_SANDBOX_CGROUP",
    "",
    shown="(the worker's own cgroup, where writable)",
    why="a cgroup v2 directory delegated to the workers for per-seat cgroups",
)
LADDER_SANDBOX_CPUS = env.number(
    "LADDER_SANDBOX_CPUS", 1, unit="cores", why="CPU one hosted seat may use at once (cpu.max)"
)
