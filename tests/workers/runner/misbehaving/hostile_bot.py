"""A bot that attacks what it can reach: the engine (with the game_id it is told) and the
text it hands back (handshake name, status messages, undecodable replies).

`--engine ADDRESS` is the engine's address; `--report FILE` receives, as JSON, the
status code of every engine call it tried. Its first Act tries to forfeit its
opponent, read the opponent's hand, fetch the record and close the game, then
fails with an error status full of terminal escapes; its second Act answers
bytes that are no DecisionReply; after that it plays the first legal action.
"""

from __future__ import annotations

import json

import grpc
from _common import args, serve_raw

from digdown.v1 import bot_pb2, engine_pb2, engine_pb2_grpc

opts = args([("--engine", str, ""), ("--report", str, "")])
HOSTILE = "\x1b[2J\x1b[31mOWNED\x1b[0m\r\nFAKE LOG LINE\x07\x00\u202eevil"
calls: dict[str, int] = {}  # Act calls per game_id
report: dict[str, str] = {}


def handshake(request: bytes, context: grpc.ServicerContext) -> bytes:
    return bot_pb2.HandshakeReply(
        name=HOSTILE + "N" * 10_000, version="v\x00\x1b1", protocol_version=1
    ).SerializeToString()


def attack(game_id: str, me: int) -> None:
    """Everything a bot could do to the game with what it knows: the game_id."""
    other = 1 - me
    with grpc.insecure_channel(opts.engine) as channel:
        engine = engine_pb2_grpc.EngineStub(channel)
        for token in ("", "guessed-token", "x" * 100_000):
            tries = {
                "Step": lambda t=token: engine.Step(
                    engine_pb2.StepRequest(
                        game_id=game_id, control_token=t, seat=other, forfeit="pwned"
                    ),
                    timeout=5,
                ),
                "GetState": lambda t=token: engine.GetState(
                    engine_pb2.GetStateRequest(game_id=game_id, control_token=t, observer=other),
                    timeout=5,
                ),
                "GetReplay": lambda t=token: engine.GetReplay(
                    engine_pb2.GetReplayRequest(game_id=game_id, control_token=t), timeout=5
                ),
                "CloseGame": lambda t=token: engine.CloseGame(
                    engine_pb2.CloseGameRequest(game_id=game_id, control_token=t), timeout=5
                ),
            }
            for name, call in tries.items():
                key = f"{name}[{len(token)}]"
                try:
                    reply = call()
                    report[key] = f"OK {reply}".strip()
                except grpc.RpcError as exc:
                    report[key] = exc.code().name
    with open(opts.report, "w") as f:
        json.dump(report, f)


def act(request_bytes: bytes, context: grpc.ServicerContext) -> bytes:
    request = bot_pb2.DecisionRequest.FromString(request_bytes)
    n = calls[request.game_id] = calls.get(request.game_id, 0) + 1
    if n == 1:
        attack(request.game_id, request.seat)
        context.abort(grpc.StatusCode.INTERNAL, HOSTILE * 100)
    if n == 2:
        return b"\xff\xff\xff\xff\xff\xff\xff\xff\x0f" + b"\x1b" * 5000  # no DecisionReply
    return bot_pb2.DecisionReply(action=request.legal_actions[0]).SerializeToString()


serve_raw(
    opts,
    {
        "Handshake": grpc.unary_unary_rpc_method_handler(handshake),
        "Act": grpc.unary_unary_rpc_method_handler(act),
    },
)
