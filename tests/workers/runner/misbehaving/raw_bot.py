"""A Bot server without the SDK (raw bytes): `--mode garbage|huge|empty|raise`.

garbage: Act answers bytes that are not a DecisionReply; huge: a valid
DecisionReply of `--size` bytes; empty: a reply without an action; raise: an
error status. Handshake answers properly, so only Act misbehaves.
"""

from __future__ import annotations

import grpc
from _common import args, serve_raw

from digdown.v1 import bot_pb2

opts = args([("--mode", str, "garbage"), ("--size", int, 5 * 1024 * 1024)])


def handshake(request: bytes, context: grpc.ServicerContext) -> bytes:
    return bot_pb2.HandshakeReply(
        name=f"raw-{opts.mode}", version="1", protocol_version=1
    ).SerializeToString()


def act(request: bytes, context: grpc.ServicerContext) -> bytes:
    if opts.mode == "garbage":
        return b"\xff\xff\xff\xff\xff\xff\xff\xff\x0f"  # a truncated varint: unparseable
    if opts.mode == "huge":
        reply = bot_pb2.DecisionReply()
        reply.action.trade.item = "X" * opts.size
        return reply.SerializeToString()
    if opts.mode == "empty":
        return b""
    context.abort(grpc.StatusCode.INTERNAL, "boom " + "!" * 10_000)
    return b""


serve_raw(
    opts,
    {
        "Handshake": grpc.unary_unary_rpc_method_handler(handshake),
        "Act": grpc.unary_unary_rpc_method_handler(act),
    },
)
