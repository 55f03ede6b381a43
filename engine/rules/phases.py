"""The steps of the state machine and the base position (rules §4)."""

from typing import Final

# Final: the compiled build reads them as constants, not from the module's namespace.
BASE: Final = "BASE"
DECIDE: Final = "DECIDE"
POSITION: Final = "POSITION"
RESOLVE: Final = "RESOLVE"
OVER: Final = "OVER"
AT_BASE: Final = -1  # a seat's position while it stands at the base
