"""Runner-only messages that carry a decision's observation as the engine's bytes.

The runner never reads an observation: it takes it from the engine's decision and
hands it to the seat's bot. Parsed into a ``digdown.v1.Observation`` and copied into
a ``DecisionRequest`` that is serialized again, it cost the match's thread a parse,
a deep copy and a serialization per decision. These messages are the engine's
``Play`` replies and the bot's ``DecisionRequest`` with every field as in the real
protos (copied from their descriptors, so they cannot drift) except the
observation, which is a ``bytes`` field with the same number: a length-delimited
field is encoded the same whether it is a message or bytes, so the bot receives
the very bytes the engine sent, and a ``RawDecisionRequest`` serializes to the same
bytes as the ``DecisionRequest`` built from the parsed observation would (upb writes
fields in number order, and the observation's bytes are the engine's own).
The observation keeps explicit presence (``optional``): an empty observation the
engine sent is still sent on, as an empty message field would be.

Everything else the runner reads (seat, ply, legal actions, events, result) is
parsed as before, into the real message types.

Built with protobuf's public API (descriptor pool, message factory); what it relies on
beyond it is the wire format (a message and a ``bytes`` field encode alike) and upb's
field order, which tests/workers/runner/test_passthrough.py checks byte for byte. Its
gain, the runner's CPU per streamed decision, is recorded in docs/benchmark-report.md,
"Private library internals kept".
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from digdown.v1 import bot_pb2, engine_pb2, game_pb2

_PACKAGE = "digdown.runner"


def _copy(descriptor: Any, name: str, retype: dict[str, str]) -> descriptor_pb2.DescriptorProto:
    """``descriptor`` as a new message ``name``; fields in ``retype`` get the type named
    there ("bytes": a bytes field with explicit presence, else a message of this file)."""
    proto = descriptor_pb2.DescriptorProto()
    descriptor.CopyToProto(proto)
    proto.name = name
    for field in proto.field:
        target = retype.get(field.name)
        if target is None:
            continue
        if target == "bytes":
            field.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
            field.ClearField("type_name")
            field.proto3_optional = True
            field.oneof_index = len(proto.oneof_decl)
            proto.oneof_decl.add(name=f"_{field.name}")
        else:
            field.type_name = f".{_PACKAGE}.{target}"
    # Synthetic oneofs (proto3 optional) must come after the real ones: they do here,
    # since every real oneof was copied first.
    return proto


def _build() -> dict[str, Any]:
    file = descriptor_pb2.FileDescriptorProto(
        name="workers/runner/passthrough.proto",
        package=_PACKAGE,
        syntax="proto3",
        dependency=[engine_pb2.DESCRIPTOR.name, bot_pb2.DESCRIPTOR.name],
    )
    file.message_type.extend(
        [
            _copy(engine_pb2.Decision.DESCRIPTOR, "RawDecision", {"observation": "bytes"}),
            _copy(
                engine_pb2.NewGameResponse.DESCRIPTOR,
                "RawNewGameResponse",
                {"decision": "RawDecision"},
            ),
            _copy(
                engine_pb2.StepResponse.DESCRIPTOR, "RawStepResponse", {"decision": "RawDecision"}
            ),
            _copy(
                engine_pb2.PlayResponse.DESCRIPTOR,
                "RawPlayResponse",
                {"new_game": "RawNewGameResponse", "step": "RawStepResponse"},
            ),
            _copy(
                bot_pb2.DecisionRequest.DESCRIPTOR,
                "RawDecisionRequest",
                {"observation": "bytes"},
            ),
        ]
    )
    pool = descriptor_pool.Default()
    pool.Add(file)
    return {
        m.name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{m.name}"))
        for m in file.message_type
    }


_classes = _build()
RawDecision: Any = _classes["RawDecision"]
RawPlayResponse: Any = _classes["RawPlayResponse"]
RawDecisionRequest: Any = _classes["RawDecisionRequest"]


def decision_message(raw: Any) -> engine_pb2.Decision:
    """The ``engine_pb2.Decision`` of a ``RawDecision`` (for those who read the observation)."""
    decision: engine_pb2.Decision = engine_pb2.Decision.FromString(raw.SerializeToString())
    return decision


def observation_message(data: bytes) -> game_pb2.Observation:
    """The observation of a ``RawDecision`` as a message, for a request built with it as
    before (``DecisionRequest(observation=...)``: the constructor keeps the order of the
    maps' entries as parsed, while ``CopyFrom`` or parsing a whole request may not)."""
    return game_pb2.Observation.FromString(data)
