"""A client of the ladder run inside a node (the bots' machine): REST, gRPC and a page.

    python -m tests.cluster.client WEB_HOST:PORT GRPC_HOST:PORT TOKEN

Prints one JSON object: the HTTP status of an authenticated REST read, of an
authenticated REST write (a challenge) and of the leaderboard page, and the gRPC
status of an authenticated call. A status of 500 / INTERNAL is what the drills
refuse while Redis is away.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request

import grpc

from digdown.v1 import ladder_pb2, ladder_pb2_grpc


def http(url: str, token: str, data: dict | None = None) -> int:
    body = None if data is None else json.dumps(data).encode()
    request = urllib.request.Request(url, data=body, method="GET" if data is None else "POST")
    request.add_header("Authorization", f"Bearer {token}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=20) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return -1


def main() -> None:
    web, grpc_address, token = sys.argv[1:4]
    out = {
        "rest_read": http(f"http://{web}/api/v1/bots/", token),
        "page": http(f"http://{web}/", token),
    }
    with grpc.insecure_channel(grpc_address) as channel:
        stub = ladder_pb2_grpc.LadderStub(channel)
        try:
            stub.ListMyBots(
                ladder_pb2.ListMyBotsRequest(), metadata=[("authorization", f"Bearer {token}")],
                timeout=20,
            )  # fmt: skip
            out["grpc"] = "OK"
        except grpc.RpcError as exc:
            out["grpc"] = exc.code().name
            out["grpc_details"] = exc.details()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
