"""Think for a set time per decision: CONFIG sleep_s of wall clock, or spin_s of CPU time.

Not hostile: it plays by the rules, only slowly, to show which clock the runner
charges it. With CONFIG threads=N it also keeps N threads spinning between
decisions (its own noise, charged to it under CPU time).
"""

import time

from probe import CONFIG, serve


def act(observation, legal):
    if CONFIG.get("sleep_s"):
        time.sleep(CONFIG["sleep_s"])
    if CONFIG.get("spin_s"):
        end = time.thread_time() + CONFIG["spin_s"]
        while time.thread_time() < end:
            pass
    return 0


serve(act)
