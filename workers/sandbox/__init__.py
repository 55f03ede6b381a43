"""The hosted-bot sandbox: one bubblewrap-isolated process tree per hosted seat per match.

    from workers.sandbox import Bundle, SandboxLimits, hosted_seat
    with hosted_seat(Bundle("bot.py", source), SandboxLimits()) as seat:
        run_match(engine, [seat.bot_spec(name="mine"), "127.0.0.1:50061"], seed=7)
    seat.log_bytes()

The security model (what is isolated, how, and what is not) is docs/sandbox.md.
"""

from .bundle import Bundle, BundleError
from .launcher import (
    HostedSeat,
    SandboxConfig,
    SandboxLimits,
    SandboxUnavailable,
    hosted_seat,
    hosted_seats,
    sandbox_check,
    seat_processes,
    worker_mode,
)

__all__ = [
    "Bundle",
    "BundleError",
    "HostedSeat",
    "SandboxConfig",
    "SandboxLimits",
    "SandboxUnavailable",
    "hosted_seat",
    "hosted_seats",
    "sandbox_check",
    "seat_processes",
    "worker_mode",
]
