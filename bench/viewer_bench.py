"""What the replay viewer costs: timeline build time, JSON and gzip size, load time in a browser.

    .venv/bin/python bench/viewer_bench.py [--games 5] [--seats 4] [--difficulty hardcore]
                                           [--players heuristic] [--browser] [--json]

Not a test. Real matches are played first (a real engine and real house bots,
each its own process, driven by the runner: tests/support/replays.play_real),
then for each replay file:

- build: `engine.timeline.build_timeline` on the decoded document (re-simulation,
  verification, every seat's observation at every step), best of 3, in wall
  time and in this process's CPU time (what it costs on an idle core: the
  machine is shared, and the wall time says how busy it was);
- the timeline's JSON size and its gzip size (what the endpoint sends to a
  browser that accepts gzip, and what the cache holds), against the replay file;
- served: `ladder.viewer.timelines.timeline_of_bytes` cold (decode + build +
  JSON + gzip + cache) and warm (a cache hit);
- with --browser: `manage.py runserver` and Debian's Chromium (Playwright) open
  the standalone page and load the replay file, from choosing the file to the
  first step drawn (POST, build, transfer, decode of every step, drawing), cold
  and then warm (same file, cached timeline), with the request's share (server
  and transfer, from the browser's resource timing); and stepping 50 decisions
  with →.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")

from bench.procs import stop  # noqa: E402
from engine.timeline import build_timeline  # noqa: E402
from tests.support.browser import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402
from tests.support.replays import play_real  # noqa: E402


def best_of(n: int, fn: Any) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def cpu_time(fn: Any) -> float:
    """This process's CPU seconds for fn (best of 3): what it costs on an idle core."""
    times = []
    for _ in range(3):
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return min(times)


def measure_build(data: bytes) -> dict[str, Any]:
    doc = json.loads(gzip.decompress(data))
    timeline = build_timeline(doc)
    assert timeline["verification"]["ok"], timeline["verification"]
    body = json.dumps(timeline, separators=(",", ":"), ensure_ascii=False).encode()
    return {
        "decisions": len(timeline["decisions"]),
        "events": len(timeline["events"]),
        "replay_gz_bytes": len(data),
        "replay_json_bytes": len(gzip.decompress(data)),
        "build_s": best_of(3, lambda: build_timeline(doc)),
        "build_cpu_s": cpu_time(lambda: build_timeline(doc)),
        "timeline_json_bytes": len(body),
        "timeline_gzip_bytes": len(gzip.compress(body, compresslevel=6)),
    }


def measure_served(data: bytes) -> dict[str, float]:
    import django

    django.setup()
    from django.core.cache import cache

    from ladder.viewer.timelines import timeline_of_bytes

    cache.clear()
    started = time.perf_counter()
    timeline_of_bytes(data)
    cold = time.perf_counter() - started
    warm = best_of(5, lambda: timeline_of_bytes(data))
    return {"served_cold_s": cold, "served_warm_s": warm}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure_browser(files: list[Path], tmp: Path) -> list[dict[str, float]]:
    from playwright.sync_api import sync_playwright

    if CHROMIUM is None:
        raise SystemExit("--browser needs Debian's chromium (apt-get install chromium)")
    env = {**os.environ, "LADDER_VAR_DIR": str(tmp / "var"), "DJANGO_DEBUG": "1"}
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, cwd=ROOT, check=True, timeout=120)
    port = free_port()
    with (tmp / "runserver.log").open("w") as log:
        server = subprocess.Popen(
            [*manage, "runserver", "--noreload", f"127.0.0.1:{port}"],
            env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    results = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("runserver did not come up") from None
                time.sleep(0.2)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            for path in files:
                row = {}
                for label in ("cold", "warm"):
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    page.goto(f"{base}/replays/")
                    page.wait_for_selector("[data-role=file]")
                    started = time.perf_counter()
                    page.set_input_files("[data-role=file]", str(path))
                    page.wait_for_selector("[data-ddv][data-loaded=true]", timeout=60_000)
                    row[f"browser_load_{label}_s"] = time.perf_counter() - started
                    # Of that, the request (server + transfer), from the browser's resource timing.
                    row[f"browser_request_{label}_s"] = page.evaluate(
                        """() => {
                          const r = performance.getEntriesByType('resource')
                            .filter((e) => e.name.includes('/timeline/')).pop();
                          return r ? (r.responseEnd - r.startTime) / 1000 : null;
                        }"""
                    )
                    page.close()
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"{base}/replays/")
                page.set_input_files("[data-role=file]", str(path))
                page.wait_for_selector("[data-ddv][data-loaded=true]", timeout=60_000)
                page.locator("body").click(position={"x": 5, "y": 5})
                started = time.perf_counter()
                for _ in range(50):
                    page.keyboard.press("ArrowRight")
                page.wait_for_function("document.querySelector('[data-ddv]').dataset.pos === '50'")
                row["browser_step_ms"] = (time.perf_counter() - started) / 50 * 1000
                page.close()
                results.append(row)
            browser.close()
    finally:
        stop([server])
    return results


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_1min": os.getloadavg()[0],
        "platform": platform.platform(),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=5)
    p.add_argument("--seats", type=int, default=4)
    p.add_argument("--difficulty", default="hardcore")
    p.add_argument("--players", default="heuristic", help="heuristic or random house bots")
    p.add_argument("--seed", type=int, default=100)
    p.add_argument("--browser", action="store_true", help="also load each replay in Chromium")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    module = {"heuristic": "examples.heuristic_bot", "random": "examples.random_bot"}[args.players]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="viewer-bench-") as tmp_name:
        tmp = Path(tmp_name)
        files = []
        for g in range(args.games):
            seed = args.seed + g
            print(f"playing game {g + 1}/{args.games} (seed {seed})...", file=sys.stderr)
            bots = [(f"{args.players}-{s}", module, ()) for s in range(args.seats)]
            (tmp / f"g{g}").mkdir()
            played = play_real(tmp / f"g{g}", bots, seed=seed, difficulty=args.difficulty)
            path = tmp / f"replay-{seed}.json.gz"
            path.write_bytes(played.data)
            files.append(path)
            rows.append({"seed": seed, **measure_build(played.data), **measure_served(played.data)})
        if args.browser:
            print("loading the replays in Chromium...", file=sys.stderr)
            for row, extra in zip(rows, measure_browser(files, tmp), strict=True):
                row.update(extra)
    keys = [k for k in rows[0] if k != "seed"]
    summary = {k: statistics.median(r[k] for r in rows) for k in keys}
    summary["json_per_gzip"] = summary["timeline_json_bytes"] / summary["timeline_gzip_bytes"]
    summary["gzip_per_replay"] = summary["timeline_gzip_bytes"] / summary["replay_gz_bytes"]
    report = {
        "games": rows,
        "median": summary,
        "machine": machine(),
        "setup": vars(args),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"{args.games} games, {args.seats} seats, {args.difficulty}, {args.players} bots (median)"
    )
    for k, v in summary.items():
        shown = f"{v * 1000:.1f} ms" if k.endswith("_s") else f"{v:,.1f}"
        print(f"  {k:24} {shown}")
    print(f"  machine: {report['machine']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
