"""Ask the kernel for what the seccomp policy denies: each call is tried, its errno reported.

CONFIG "calls" is a list of [label, syscall number, args...] (numbers resolved by the
test on the host, so this works on any architecture). A clone (its label says
"clone") that is let through exits its child at once and reaps it. Then the bot
serves and plays: a denied call is an error code, not the end of the bot.
"""

import ctypes
import os
import threading

from probe import CONFIG, report, serve

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def call(label, number, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    forks = "clone" in label
    if result == 0 and forks:
        os._exit(0)  # the child of a clone that was let through: leave at once
    err = ctypes.get_errno()
    if result == -1:
        report(label, f"failed errno {err} {os.strerror(err)}")
    else:
        report(label, f"SUCCEEDED {result}")
        if forks and result > 0:
            os.waitpid(result, 0)


with open("/proc/self/status") as status:
    report("seccomp", next(line for line in status if line.startswith("Seccomp:")).split()[1])
for label, number, *args in CONFIG["calls"]:
    call(label, number, *args)
thread = threading.Thread(target=lambda: report("thread", "SUCCEEDED ran"))
thread.start()
thread.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
report("fork", f"SUCCEEDED child exit {os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}")
serve()
