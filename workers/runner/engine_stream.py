"""The engine calls of one game over one ``Play`` stream (engine.proto), as a stub.

``StreamedEngine`` has the unary stub's ``NewGame``, ``Step``, ``GetReplay`` and
``CloseGame`` with the same signatures and answers (``GetReplay`` is the game's last
request: the stream is half-closed with it), so the match loop's
deadlines, retries and resume after an engine death stay one piece of code
whichever way a game is played. ``NewGame`` opens the game's stream; the game
lives and dies with it (the engine closes it when the stream ends). A stream
that failed once is never used again: its game is reported NOT_FOUND, which is
what sends the runner to re-create the game and re-apply its answers. An engine
that refuses the stream (UNIMPLEMENTED: an older engine; RESOURCE_EXHAUSTED: its
stream limit or its game quota) gets this game by unary calls instead.

The stream's replies are read as ``workers.runner.passthrough`` messages: a
decision's observation stays the engine's bytes, handed to the bot as they are
(its ``decision`` is a ``RawDecision``; the unary calls' is a ``Decision``).
"""

from __future__ import annotations

import logging

import grpc

from digdown.v1 import engine_pb2, engine_pb2_grpc
from workers.runner.net import TransportError, rpc_code
from workers.runner.passthrough import RawPlayResponse
from workers.runner.streams import CallStream

log = logging.getLogger("workers.runner")

_NO_STREAM = {grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.RESOURCE_EXHAUSTED}
# A PlayRequest holding only a step is its field's tag, the step's length and the step's
# own bytes: what upb writes for PlayRequest(step=...), built without copying the step.
_STEP_TAG = bytes([engine_pb2.PlayRequest.DESCRIPTOR.fields_by_name["step"].number << 3 | 2])


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _play_bytes(request: engine_pb2.PlayRequest | bytes) -> bytes:
    """A Play request's bytes: a ``PlayRequest``, or bytes already made (a step's)."""
    return request if isinstance(request, bytes) else request.SerializeToString()


class StreamedEngine:
    """One game's engine calls over a ``Play`` stream on ``channel`` (unary when refused)."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.unary = engine_pb2_grpc.EngineStub(channel)
        self.play = channel.stream_stream(
            "/digdown.v1.Engine/Play",
            request_serializer=_play_bytes,
            response_deserializer=RawPlayResponse.FromString,
            _registered_method=True,  # type: ignore[call-arg]  # as the generated stub
        )
        self.streaming = True
        self._stream: CallStream | None = None

    def NewGame(  # the unary stub's names and signatures
        self, request: engine_pb2.NewGameRequest, timeout: float
    ) -> engine_pb2.NewGameResponse:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if not self.streaming:
            created: engine_pb2.NewGameResponse = self.unary.NewGame(request, timeout=timeout)
            return created
        stream = CallStream(self.play)
        try:
            response = stream.ask(engine_pb2.PlayRequest(new_game=request), timeout)
        except grpc.RpcError as exc:
            if rpc_code(exc) not in _NO_STREAM:
                raise
            log.info("engine refused a Play stream (%s): this game by unary calls", exc)
            self.streaming = False
            return self.NewGame(request, timeout=timeout)
        self._stream = stream
        return response.new_game

    def Step(self, request: engine_pb2.StepRequest, timeout: float) -> engine_pb2.StepResponse:
        if not self.streaming:
            stepped: engine_pb2.StepResponse = self.unary.Step(request, timeout=timeout)
            return stepped
        # PlayRequest(step=request)'s bytes without the copy of the request into it.
        data = request.SerializeToString()
        return self._ask(_STEP_TAG + _varint(len(data)) + data, timeout).step

    def GetReplay(
        self, request: engine_pb2.GetReplayRequest, timeout: float
    ) -> engine_pb2.GetReplayResponse:
        if not self.streaming:
            replay: engine_pb2.GetReplayResponse = self.unary.GetReplay(request, timeout=timeout)
            return replay
        # The game's last request: the stream is half-closed with it, so the engine ends
        # the stream (and closes the game) as soon as it answered, and CloseGame only
        # takes that end back instead of waiting a round trip for it.
        return self._ask(engine_pb2.PlayRequest(get_replay=request), timeout, last=True).replay

    def CloseGame(
        self, request: engine_pb2.CloseGameRequest, timeout: float
    ) -> engine_pb2.CloseGameResponse:
        if not self.streaming:
            closed: engine_pb2.CloseGameResponse = self.unary.CloseGame(request, timeout=timeout)
            return closed
        was_open = self._stream is not None and not self._stream.broken
        if self._stream is not None:
            self._stream.close(grace_s=timeout)
            self._stream = None
        return engine_pb2.CloseGameResponse(closed=was_open)

    def half_close(self) -> None:
        """Start ending the game's stream (``CloseGame`` waits for its end)."""
        if self._stream is not None and not self._stream.broken:
            self._stream.half_close()

    def _ask(
        self, request: engine_pb2.PlayRequest | bytes, timeout: float, *, last: bool = False
    ) -> engine_pb2.PlayResponse:
        stream = self._stream
        if stream is None or stream.broken or stream.half_closed:
            raise TransportError(
                grpc.StatusCode.NOT_FOUND, "the game's Play stream is closed: the game is gone"
            )
        response: engine_pb2.PlayResponse = stream.ask(request, timeout, last=last)
        return response
