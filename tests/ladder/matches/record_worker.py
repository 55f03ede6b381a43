"""Subprocess for the concurrency test: record every job of a JSON file in a shuffled order.

Run as ``python tests/ladder/matches/record_worker.py JOBS.json SEED GO_FILE READY_FILE``; the
database comes from DATABASE_URL (the test database of the parent). Once Django is
set up and connected it writes READY_FILE, then waits for GO_FILE (which the parent
writes when every worker is ready), so all of them start recording together; then
it prints a JSON summary on stdout.
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
    jobs_path, seed = sys.argv[1], int(sys.argv[2])
    go_file, ready_file = Path(sys.argv[3]), Path(sys.argv[4])
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")
    import django

    django.setup()
    from django.db import connection

    from ladder.matches.recording import match_record_result

    jobs = json.loads(Path(jobs_path).read_text())
    random.Random(seed).shuffle(jobs)
    connection.ensure_connection()
    ready_file.write_text(str(os.getpid()))
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
