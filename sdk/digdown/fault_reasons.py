"""The typed reason of a relayed call's failure, carried beside its gRPC status.

The Play stream server knows why a request to a connected bot failed
(``digdown.v1.FaultReason``, protos/digdown/v1/faults.proto); the relay sends that
reason as trailing metadata ``digdown-fault-reason`` (the enum value's name) with
the status, and the worker reads it back here to decide whose fault it was. One
place for both ends, so the rule never depends on the words of a message.
"""

from __future__ import annotations

from typing import Any

from digdown.v1 import faults_pb2

METADATA_KEY = "digdown-fault-reason"

# The ladder's own doing: a failure with one of these reasons is never charged to a bot.
LADDER_REASONS = frozenset(
    {
        faults_pb2.FAULT_REASON_SERVER_STOPPING,
        faults_pb2.FAULT_REASON_RELAY_LOST,
        faults_pb2.FAULT_REASON_PRESENCE_UNREADABLE,
        faults_pb2.FAULT_REASON_NO_STREAM_IN_GRACE,
    }
)


def name(reason: int) -> str:
    """The enum value's name (``FAULT_REASON_STREAM_CLOSED``); UNSPECIFIED if unknown."""
    try:
        return faults_pb2.FaultReason.Name(faults_pb2.FaultReason.ValueType(reason))
    except ValueError:
        return "FAULT_REASON_UNSPECIFIED"


def metadata(reason: int) -> tuple[tuple[str, str], ...]:
    """The trailing metadata that carries ``reason``."""
    return ((METADATA_KEY, name(reason)),)


def of_call(call: Any) -> int:
    """The reason a failed call's trailing metadata carries (UNSPECIFIED when none: the
    failure was not judged by the Play stream server, e.g. the relay was unreachable)."""
    try:
        trailers = call.trailing_metadata() or ()
    except Exception:  # not a grpc.Call (an error raised on this side)
        return faults_pb2.FAULT_REASON_UNSPECIFIED
    for key, value in trailers:
        if key == METADATA_KEY:
            try:
                return int(faults_pb2.FaultReason.Value(str(value)))
            except ValueError:
                return faults_pb2.FAULT_REASON_UNSPECIFIED
    return faults_pb2.FAULT_REASON_UNSPECIFIED
