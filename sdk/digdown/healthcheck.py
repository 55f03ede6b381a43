"""Ask a gRPC server whether it serves: ``python -m digdown.healthcheck ADDR [SERVICE]``.

Exit status 0 when ``grpc.health.v1`` answers SERVING for SERVICE (default
``""``, the whole server) within ``--timeout`` seconds, 1 otherwise (not
serving, draining, unknown service, unreachable). docker-compose healthchecks
call it, so it needs nothing but grpcio and the health stubs; the project's
own code waits on a server through ``wait_until_serving``, the same probe.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

SERVING = health_pb2.HealthCheckResponse.SERVING


def status(channel: grpc.Channel, service: str = "", timeout_s: float = 1.0) -> int | None:
    """The health status of ``service`` over ``channel``; None if the call failed."""
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout_s)
    except grpc.RpcError:
        return None
    return reply.status


def wait_until_serving(
    address: str,
    service: str = "",
    timeout: float = 20.0,
    *,
    alive: Callable[[], bool] | None = None,
    poll_s: float = 0.05,
) -> None:
    """Poll health until ``service`` at ``address`` is SERVING; bounded by ``timeout`` seconds.

    Raises TimeoutError when it never is. ``alive`` (e.g. "the server process
    still runs") is asked between probes: when it turns False, waiting longer
    is pointless and ChildProcessError is raised at once. Both are OSError.
    """
    deadline = time.monotonic() + timeout
    what = f"{address} ({service or 'server'})"
    with grpc.insecure_channel(address) as channel:
        while True:
            remaining = deadline - time.monotonic()
            probe_s = max(0.05, min(1.0, remaining))
            if status(channel, service, probe_s) == SERVING:
                return
            if alive is not None and not alive():
                raise ChildProcessError(f"{what} stopped before serving")
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{address} ({service or 'server'}) not serving within {timeout} s"
                )
            time.sleep(poll_s)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m digdown.healthcheck", description=__doc__.splitlines()[0]
    )
    p.add_argument("address", help="host:port of the gRPC server")
    p.add_argument("service", nargs="?", default="", help='e.g. digdown.v1.Engine (default "")')
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for SERVING")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        wait_until_serving(args.address, args.service, args.timeout)
    except TimeoutError as exc:
        print(f"not serving: {exc}", file=sys.stderr)
        return 1
    print(f"{args.address} {args.service or '(server)'}: SERVING")
    return 0


if __name__ == "__main__":
    sys.exit(main())
