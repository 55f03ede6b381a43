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

A replica that failed (the runner calls ``mark_down``) is tried last by every
new game, so games go around it at once instead of each retrying a dead address;
a background probe asks its gRPC health service every ``PROBE_INTERVAL_S`` and
puts it back in turn as soon as it answers SERVING.

Channels are created on first use in the process that uses them, never at
import, and kept per (process, address): a channel made before a fork hangs in
the child, and a channel per process and endpoint avoids a connect per game
(a channel per call leaks threads and sockets).
"""

from __future__ import annotations

import itertools
import logging
import os
import random
import socket
import threading
import time
from collections.abc import Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from workers.local_engine import LocalEngine
from workers.runner.net import engine_channel_options

log = logging.getLogger("workers.engines")

ENGINE_SERVICE = "digdown.v1.Engine"
PROBE_INTERVAL_S = 1.0  # how often a replica marked down is asked whether it is back
PROBE_TIMEOUT_S = 1.0


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
        self._down: dict[str, float] = {}  # address -> when it was marked down (monotonic)
        self._prober: threading.Thread | None = None
        self._closed = threading.Event()

    def __str__(self) -> str:
        return ",".join(self.targets)

    def addresses(self) -> list[str]:
        """The concrete engine addresses, in the order the next game should try them."""
        found: list[str] = []
        for target in self.targets:
            found.extend(a for a in resolve(target) if a not in found)
        turn = next(self._turn) % len(found)
        ordered = found[turn:] + found[:turn]
        with self._lock:
            down = set(self._down)
        # Replicas marked down go last: tried only when no other takes the game.
        return [a for a in ordered if a not in down] + [a for a in ordered if a in down]

    def down(self) -> list[str]:
        """The replicas marked down and not yet answering their health probe."""
        with self._lock:
            return sorted(self._down)

    def mark_down(self, address: str, reason: str = "") -> None:
        """``address`` failed a call: route new games around it until its probe answers."""
        with self._lock:
            if os.getpid() != self._pid:
                self._channels, self._down, self._prober = {}, {}, None
                self._pid = os.getpid()
            if address in self._down:
                return
            self._down[address] = time.monotonic()
            if self._prober is None or not self._prober.is_alive():
                self._prober = threading.Thread(
                    target=self._probe_loop, name="engine-probe", daemon=True
                )
                self._prober.start()
        log.warning("engine %s marked down (%s); new games go to the others", address, reason)

    def mark_up(self, address: str) -> None:
        with self._lock:
            since = self._down.pop(address, None)
        if since is not None:
            log.warning(
                "engine %s is back after %.1f s; it takes games again",
                address, time.monotonic() - since,
            )  # fmt: skip

    def _probe_loop(self) -> None:
        """Ask each replica marked down for its health until none is left (or closed)."""
        while not self._closed.wait(PROBE_INTERVAL_S):
            with self._lock:
                down = list(self._down)
            if not down:
                with self._lock:
                    if not self._down:
                        self._prober = None
                        return
                continue
            for address in down:
                if self.healthy(address):
                    self.mark_up(address)

    def healthy(self, address: str) -> bool:
        """Does the engine at ``address`` answer its health check with SERVING now?"""
        try:
            reply = health_pb2_grpc.HealthStub(self.channel(address)).Check(
                health_pb2.HealthCheckRequest(service=ENGINE_SERVICE), timeout=PROBE_TIMEOUT_S
            )
        except grpc.RpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

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
        self._closed.set()
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
