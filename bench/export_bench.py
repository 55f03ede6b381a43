"""Does a game export stream in bounded memory? Peak memory of exports of growing size.

    DATABASE_URL=postgres://.../db .venv/bin/python bench/export_bench.py \
        [--matches 10000] [--sizes 1000,10000] [--formats jsonl,parquet] [--replays 40]

Builds (or reuses) a ladder of ``--matches`` finished matches with
``bench/ladder_data.py`` and gives every finished match a real replay: the
engine plays ``--replays`` distinct games (2-4 seats, dd-2) and each match's
stored replay file is one of them (``LADDER_MEDIA_ROOT``, default under var/).
Then each export size runs ``manage.py export_games`` in a fresh process and
reads that process's peak resident memory (its own report, ``ru_maxrss``):
flat across sizes is bounded; growing with the size is not. Figures of one run;
the machine's load is printed with them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LADDER_MEDIA_ROOT", str(ROOT / "var" / "export_bench_media"))


def replay_docs(n: int) -> list[bytes]:
    """``n`` real replay documents (gzip'd JSON), played by the engine's heuristic."""
    from engine.players import HeuristicPlayer
    from engine.rules import GameConfig, new_game
    from engine.simulate import play_out
    from engine.training.dataset import replay_of

    out = []
    for i in range(n):
        seats = 2 + i % 3
        state = new_game(GameConfig(seed=9000 + i, num_seats=seats, ruleset="dd-2"))
        bots = [HeuristicPlayer(random.Random(i * 8 + s)) for s in range(seats)]
        play_out(state, lambda seat, obs, legal, bots=bots: bots[seat].act(obs, legal))
        doc = replay_of(state)
        out.append(gzip.compress(json.dumps(doc).encode(), mtime=0))
    return out


def store_replays(docs: list[bytes]) -> int:
    """Write a replay file for every finished match that has none; the count written."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    from ladder.matches.models import Match

    written = 0
    names = Match.objects.filter(status="finished").exclude(replay="").values_list("replay", "pk")
    for name, pk in names.iterator(chunk_size=2000):
        if not default_storage.exists(name):
            default_storage.save(name, ContentFile(docs[pk % len(docs)]))
            written += 1
    return written


def run_export(size: int, fmt: str, out: Path) -> tuple[float, float, int]:
    """(peak MiB, seconds, bytes) of one export of ``size`` matches in a fresh process."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "export_games", "--out", str(out),
         "--format", fmt, "--limit", str(size), "--ladder", "dd-2"],
        capture_output=True, text=True, check=True, timeout=3600, env=os.environ.copy(),
    )  # fmt: skip
    seconds = time.perf_counter() - started
    m = re.search(r"peak memory of this process (\d+) MiB", proc.stderr)
    assert m, proc.stderr
    return float(m.group(1)), seconds, out.stat().st_size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=10_000)
    ap.add_argument("--bots", type=int, default=500)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--formats", default="jsonl,parquet")
    ap.add_argument("--replays", type=int, default=40)
    args = ap.parse_args()
    from bench.ladder_data import ensure  # sets Django up

    data = ensure(bots=args.bots, matches=args.matches)
    print(f"data set: {data}", file=sys.stderr)
    print(f"replay files written: {store_replays(replay_docs(args.replays))}", file=sys.stderr)
    out_dir = ROOT / "var" / "export_bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"Machine: {os.cpu_count()} cores, load {load}\n")
    print("| format | matches | peak RSS (MiB) | seconds | bytes |")
    print("|---|---|---|---|---|")
    for fmt in args.formats.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            peak, secs, size_b = run_export(size, fmt, out_dir / f"games-{size}.{fmt}")
            print(f"| {fmt} | {size} | {peak:.0f} | {secs:.1f} | {size_b} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
