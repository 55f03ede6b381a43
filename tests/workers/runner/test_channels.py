"""Bot channels are kept across matches while their bot behaves (workers.runner.net.BotChannels).

A clean match gives each seat's channel back, and the next match with the same bots
dials nothing new; a bot whose calls failed (here: timeouts) is dialled afresh, so
no fault handling ever depends on a channel's history. Real bots on loopback.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.processes import Proc, start_bot
from workers.runner import TimeControl, run_match
from workers.runner.net import BOT_CHANNELS


def test_a_clean_match_keeps_its_channels(engine: Proc, random_bots: list[Proc]) -> None:
    BOT_CHANNELS.clear()
    addresses = [b.address for b in random_bots]
    for streams in (True, False):
        tc = TimeControl(decision_s=10.0, bank_s=60.0, handshake_s=10.0, streams=streams)
        first = run_match(engine.address, addresses, seed=5, time_control=tc)
        assert not first.faults
        assert [BOT_CHANNELS.idle(a) for a in addresses] == [1, 1, 1]
        dialled = BOT_CHANNELS.dialled
        second = run_match(engine.address, addresses, seed=6, time_control=tc)
        assert not second.faults
        assert BOT_CHANNELS.dialled == dialled  # the same channels played it
        assert [BOT_CHANNELS.idle(a) for a in addresses] == [1, 1, 1]


def test_a_seat_whose_calls_failed_is_dialled_afresh(
    engine: Proc, random_bots: list[Proc], tmp_path: Path
) -> None:
    BOT_CHANNELS.clear()
    slow = start_bot("slow_bot.py", tmp_path, "slow-channels", "--sleep", "1.0", "--after", "1")
    bots = [slow.address, random_bots[0].address]
    tc = TimeControl(decision_s=0.2, bank_s=0.3, handshake_s=10.0)
    try:
        outcome = run_match(engine.address, bots, seed=3, time_control=tc)
    finally:
        slow.stop()
    assert any(f.seat == 0 and f.kind == "timeout" for f in outcome.faults)
    assert BOT_CHANNELS.idle(slow.address) == 0  # closed, not kept
    assert BOT_CHANNELS.idle(random_bots[0].address) == 1


def test_the_cache_is_bounded() -> None:
    from workers.runner.net import BotChannels

    channels = BotChannels(capacity=2)
    for i in range(4):
        address = f"unix:/nonexistent/{i}.sock"
        channels.give(channels.take(address, 1024, 1024), address, 1024, 1024, keep=True)
    assert [channels.idle(f"unix:/nonexistent/{i}.sock") for i in range(4)] == [0, 0, 1, 1]
    channels.clear()
    assert channels.idle("unix:/nonexistent/3.sock") == 0
