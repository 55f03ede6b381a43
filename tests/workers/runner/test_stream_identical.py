"""Streams change how a match is played, never what is played: protocol 2 against 1.

The same seeds are played by the same bots (real processes) once over streams
(one ActStream per seat, one Play stream to the engine) and once by unary calls;
the replay files must be byte for byte the same once what is documented to
differ is taken out (`replay.without_timings`: think times, the engine's game
id, start time and duration, the seats' protocol versions). A bot that answers
illegal actions keeps the faults path in the comparison.

    STREAM_IDENTICAL_SEEDS=2000 pytest tests/workers/runner/test_stream_identical.py

plays a few thousand games (CI plays a handful).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Proc, start_bot
from workers.runner import TimeControl, run_match
from workers.runner import replay as replay_io

SEEDS = int(os.environ.get("STREAM_IDENTICAL_SEEDS", "12"))
# Roomy deadlines: a timeout on a loaded machine would be a real difference.
ROOMY = {"decision_s": 10.0, "bank_s": 60.0, "handshake_s": 10.0}


@pytest.fixture(scope="module")
def illegal_bot(procdir: Path) -> Iterator[Proc]:
    bot = start_bot("illegal_bot.py", procdir, "illegal-identical")
    yield bot
    bot.stop()


# A few thousand seeds take minutes: about 0.2 s a seed here, so a second a seed is roomy.
@pytest.mark.timeout(max(300, SEEDS + 120))
def test_streamed_and_unary_replays_are_identical(
    engine: Proc, random_bots: list[Proc], illegal_bot: Proc, tmp_path: Path
) -> None:
    lineups = [
        [b.address for b in random_bots],
        [random_bots[0].address, illegal_bot.address, random_bots[1].address],
        [b.address for b in random_bots[:2]],
    ]
    compared = 0
    for seed in range(1, SEEDS + 1):
        bots = lineups[seed % len(lineups)]
        files = {}
        for streams in (True, False):
            out = tmp_path / f"{seed}-{streams}.json.gz"
            outcome = run_match(
                engine.address,
                bots,
                seed=seed,
                difficulty="normal",
                ruleset="dd-2",
                time_control=TimeControl(streams=streams, **ROOMY),
                out=out,
            )
            assert [s["protocol_version"] for s in outcome.seats] == [2 if streams else 1] * len(
                bots
            )
            files[streams] = replay_io.read(out)
        streamed, unary = (replay_io.without_timings(files[s]) for s in (True, False))
        assert replay_io.encode(streamed) == replay_io.encode(unary), f"seed {seed} differs"
        compared += 1
    assert compared == SEEDS


def test_without_timings_takes_out_only_what_is_documented() -> None:
    doc = {
        "seats": [{"seat": 0, "bot": "a", "protocol_version": 2}],
        "decisions": [{"seat": 0, "action": {"kind": "DONE"}, "think_time_ms": 5}],
        "faults": [{"seat": 0, "ply": 1, "kind": "illegal", "think_time_ms": 3}],
        "match": {
            "match_id": "m",
            "game_id": "g",
            "started_at": "t",
            "duration_s": 1.0,
            "seat_stats": [{"seat": 0, "think_s": 0.1, "decisions": 4, "protocol_version": 2}],
        },
    }
    assert replay_io.without_timings(doc) == {
        "seats": [{"seat": 0, "bot": "a"}],
        "decisions": [{"seat": 0, "action": {"kind": "DONE"}}],
        "faults": [{"seat": 0, "ply": 1, "kind": "illegal"}],
        "match": {"match_id": "m", "seat_stats": [{"seat": 0, "decisions": 4}]},
    }
    assert doc["decisions"][0]["think_time_ms"] == 5  # a copy: the document is untouched
