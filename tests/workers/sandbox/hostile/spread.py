"""Spend a set amount of CPU per decision, spread over threads or processes as asked.

Not hostile: it shows what the CPU clock charges for each way a bot may do its
work. The decision's ``game_id`` names the pattern (in a real match, whose
game_id names none: CONFIG ``pattern``, for its first CONFIG ``decisions``);
CONFIG ``work_s`` is the CPU seconds (``sleep`` and ``spin``: the wall seconds)
per decision:

- ``main``: in the thread that answers;
- ``reused``: over 4 threads made once, at the first decision;
- ``drop``: in the thread that answers, after ending the 4 threads of ``reused``
  (threads that lived through many decisions exit);
- ``threads``: over 4 new threads per decision (they exit before the answer);
- ``procs``: over 4 child processes per decision (waited for);
- ``orphans``: over 4 grandchildren per decision whose parents exit at once, so
  they are nobody's children (the sandbox's init reaps them);
- ``sleep``: no work, a sleep;
- ``spin``: a busy loop on the wall clock (as much CPU as the machine gives it).
"""

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from probe import CONFIG

from digdown.bot import parse_args, serve

WORK_S = float(CONFIG.get("work_s", 0.2))
PATTERNS = ("main", "reused", "drop", "threads", "procs", "orphans", "sleep", "spin")
SPLIT = 4
BURN = "import time\nend = time.process_time() + {s}\nwhile time.process_time() < end: pass\n"
# A child that starts the burner and exits at once: the burner is orphaned.
ORPHAN = "import subprocess, sys\nsubprocess.Popen([sys.executable, '-S', '-c', {burn!r}])\n"

_pool = None
_decisions = 0


def burn_thread(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def in_threads(seconds):
    threads = [threading.Thread(target=burn_thread, args=(seconds / SPLIT,)) for _ in range(SPLIT)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def in_reused_threads(seconds):
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(SPLIT)
    list(_pool.map(burn_thread, [seconds / SPLIT] * SPLIT))


def drop_threads():
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=True)
        _pool = None


def in_processes(seconds, orphaned):
    burn = BURN.format(s=seconds / SPLIT)
    code = ORPHAN.format(burn=burn) if orphaned else burn
    # Every process (the grandchildren too) holds the pipe's write end: EOF comes when
    # the last of them has exited, which is when the work is done.
    read_end, write_end = os.pipe()
    children = [
        subprocess.Popen([sys.executable, "-S", "-c", code], stdout=write_end) for _ in range(SPLIT)
    ]
    os.close(write_end)
    with os.fdopen(read_end, "rb") as done:
        done.read()
    for child in children:
        child.wait()


def act(observation, legal, context):
    global _decisions
    pattern = context.game_id
    if pattern not in PATTERNS:
        _decisions += 1
        if _decisions > CONFIG.get("decisions", 1 << 30):
            return 0
        pattern = CONFIG.get("pattern", "main")
    if pattern == "main":
        burn_thread(WORK_S)
    elif pattern == "reused":
        in_reused_threads(WORK_S)
    elif pattern == "drop":
        drop_threads()
        burn_thread(WORK_S)
    elif pattern == "threads":
        in_threads(WORK_S)
    elif pattern in ("procs", "orphans"):
        in_processes(WORK_S, orphaned=pattern == "orphans")
    elif pattern == "sleep":
        time.sleep(WORK_S)
    elif pattern == "spin":
        end = time.monotonic() + WORK_S
        while time.monotonic() < end:
            pass
    return 0


serve(act, listen=parse_args(None, "spread").listen, name="spread")
