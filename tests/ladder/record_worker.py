"""Subprocess for the concurrency test: record every job of a JSON file in a shuffled order.

Run as ``python tests/ladder/record_worker.py JOBS.json SEED GO_FILE``; the database
comes from DATABASE_URL (the test database of the parent). Waits for GO_FILE so
all workers start together, then prints a JSON summary on stdout.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sys
import time
from pathlib import Path


def main() -> None:
    jobs_path, seed, go_file = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")
    import django

    django.setup()
    from ladder.matches.services import match_record_result

    jobs = json.loads(Path(jobs_path).read_text())
    random.Random(seed).shuffle(jobs)
    deadline = time.monotonic() + 60
    while not go_file.exists():
        if time.monotonic() > deadline:
            raise SystemExit("no go signal")
        time.sleep(0.01)
    recorded = noop = 0
    for job in jobs:
        replay = gzip.compress(json.dumps({"match": job["match_id"]}).encode(), mtime=0)
        out = match_record_result(
            match_id=job["match_id"], result=job["result"], replay_bytes=replay
        )
        if out.recorded:
            recorded += 1
        else:
            noop += 1
    print(json.dumps({"recorded": recorded, "noop": noop}))


if __name__ == "__main__":
    main()
