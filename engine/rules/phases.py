"""The steps of the state machine and the base position (rules §4)."""

BASE, DECIDE, POSITION, RESOLVE, OVER = "BASE", "DECIDE", "POSITION", "RESOLVE", "OVER"
AT_BASE = -1  # a seat's position while it stands at the base
