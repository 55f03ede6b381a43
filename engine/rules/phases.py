"""Names shared by the state machine's modules: versions, phases, the base position."""

ENGINE_VERSION = "digdown-engine/0.1.0"
RECORD_FORMAT = "digdown-record/1"

BASE, DECIDE, POSITION, RESOLVE, OVER = "BASE", "DECIDE", "POSITION", "RESOLVE", "OVER"
AT_BASE = -1  # a seat's position while it stands at the base
