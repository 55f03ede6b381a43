"""Which engine a game is created on: one address, a comma list, or a DNS name of replicas.

A game lives in the memory of the one engine process that created it, so every
call of a game must reach that process. gRPC's ``round_robin`` policy picks a
backend per *call*, which would send a game's Step to a replica that never heard
of it; instead the pool spreads *games*: each new game (and each resume after an
engine died) goes to the next concrete address in turn, and the runner keeps
that address for the rest of the game.

``ENGINE_ADDRESS`` forms (any mix, comma-separated):

- ``host:port`` / ``[v6]:port`` — one engine; a host name is resolved every time
  a game is created, and each address it resolves to is an engine (a DNS name
  of replicas, e.g. a scaled compose service or a headless Kubernetes service);
- ``dns:///host:port`` — the same, spelled the gRPC way;
- ``unix:/path`` — one engine on a unix socket.

Channels are created on first use in the process that uses them, never at
import, and kept per (process, address): a channel made before a fork hangs in
the child, and a channel per process and endpoint avoids a connect per game
(a channel per call leaks threads and sockets).
"""

from __future__ import annotations

import itertools
import os
import random
import socket
import threading
from collections.abc import Sequence

import grpc

from workers.local_engine import LocalEngine
from workers.runner.net import engine_channel_options


class EngineAddressError(ValueError):
    """ENGINE_ADDRESS (or --engine) cannot be understood; the message says why."""


def parse_targets(spec: str | Sequence[str]) -> list[str]:
    """``"a:1, dns:///b:2"`` -> ``["a:1", "b:2"]`` (checked; no resolution yet)."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    targets = []
    for raw in items:
        item = raw.strip().removeprefix("dns:///").removeprefix("dns:")
        if not item:
            continue
        if not item.startswith("unix:"):
            host, sep, port = item.rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise EngineAddressError(f"engine address {raw.strip()!r} is not host:port")
        targets.append(item)
    if not targets:
        raise EngineAddressError("no engine address given")
    return targets


def resolve(target: str) -> list[str]:
    """Every concrete address a target names (a host name may name several replicas)."""
    if target.startswith("unix:"):
        return [target]
    host, _, port = target.rpartition(":")
    bare = host.strip("[]")
    try:
        infos = socket.getaddrinfo(bare, int(port), type=socket.SOCK_STREAM)
    except OSError:
        return [target]  # let gRPC report it (UNAVAILABLE), like any unreachable engine
    seen: list[str] = []
    for family, *_rest, sockaddr in infos:
        ip = str(sockaddr[0])
        address = f"[{ip}]:{port}" if family == socket.AF_INET6 else f"{ip}:{port}"
        if address not in seen:
            seen.append(address)
    return seen or [target]


class EnginePool:
    """The engines games may be created on, and one channel per engine in this process."""

    def __init__(self, spec: str | Sequence[str], *, first: int | None = None) -> None:
        self.targets = parse_targets(spec)
        # Start at a random place so processes that start together spread their games
        # (``first``: where to start instead, for a reproducible order).
        self._turn = itertools.count(random.randrange(1 << 16) if first is None else first)
        self._channels: dict[str, grpc.Channel] = {}
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def __str__(self) -> str:
        return ",".join(self.targets)

    def addresses(self) -> list[str]:
        """The concrete engine addresses, in the order the next game should try them."""
        found: list[str] = []
        for target in self.targets:
            found.extend(a for a in resolve(target) if a not in found)
        turn = next(self._turn) % len(found)
        return found[turn:] + found[:turn]

    def channel(self, address: str) -> grpc.Channel:
        """This process's channel to one engine (a forked child never reuses its parent's)."""
        with self._lock:
            if os.getpid() != self._pid:
                self._channels, self._pid = {}, os.getpid()
            channel = self._channels.get(address)
            if channel is None:
                channel = grpc.insecure_channel(address, options=engine_channel_options())
                self._channels[address] = channel
            return channel

    def close(self) -> None:
        with self._lock:
            channels, self._channels = self._channels, {}
        if os.getpid() == self._pid:
            for channel in channels.values():
                channel.close()


_pools: dict[tuple[int, str], EnginePool] = {}
_pools_lock = threading.Lock()
_local = LocalEngine()


def engine_pool(address: str | None = None) -> EnginePool:
    """This process's pool for ``address`` (``ENGINE_ADDRESS``); without one, a local
    engine this process starts on first use and owns (``workers.local_engine``).

    One pool per (process, address): every match the process plays shares its
    channels and what it knows of the replicas; a forked child builds its own.
    """
    address = address or _local.address()
    key = (os.getpid(), address)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = EnginePool(address)
        return pool


def shutdown() -> None:
    """Close this process's engine channels and stop its local engine (process exit)."""
    with _pools_lock:
        pools = [p for (pid, _), p in _pools.items() if pid == os.getpid()]
        _pools.clear()
    for pool in pools:
        pool.close()
    _local.stop()
