"""A Bot server without the SDK (raw bytes): `--mode garbage|huge|empty|raise|refuse`.

garbage: Act answers bytes that are not a DecisionReply; huge: a valid
DecisionReply of `--size` bytes; empty: a reply without an action; raise: an
error status. Handshake answers properly, so only Act misbehaves. With
`--protocol 2` the handshake offers ActStream, which misbehaves the same way
on every request; refuse: ActStream is refused (UNIMPLEMENTED) and Act answers
the first legal action, as a bot that claims 2 but serves only unary would.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
from _common import args, serve_raw

from digdown.v1 import bot_pb2

opts = args([("--mode", str, "garbage"), ("--size", int, 5 * 1024 * 1024), ("--protocol", int, 1)])


def handshake(request: bytes, context: grpc.ServicerContext) -> bytes:
    return bot_pb2.HandshakeReply(
        name=f"raw-{opts.mode}", version="1", protocol_version=opts.protocol
    ).SerializeToString()


def act(request: bytes, context: grpc.ServicerContext) -> bytes:
    if opts.mode == "refuse":
        legal = bot_pb2.DecisionRequest.FromString(request).legal_actions
        return bot_pb2.DecisionReply(action=legal[0]).SerializeToString()
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


def act_stream(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
    if opts.mode == "refuse":
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "no streams here after all")
    for request in requests:
        yield act(request, context)


serve_raw(
    opts,
    {
        "Handshake": grpc.unary_unary_rpc_method_handler(handshake),
        "Act": grpc.unary_unary_rpc_method_handler(act),
        "ActStream": grpc.stream_stream_rpc_method_handler(act_stream),
    },
)
