"""Look for the worker's secrets: its environment, other processes, the database, other bots."""

import os

from probe import CONFIG, attempt, report, serve

report("environ", dict(os.environ))


def read(path):
    with open(path, "rb") as fh:
        return fh.read(100_000)


for path in CONFIG["files"]:
    attempt(f"read {path}", lambda path=path: read(path))

pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
report("pids", pids)
for pid in pids:
    for what in ("environ", "cmdline"):
        attempt(f"read /proc/{pid}/{what}", lambda p=pid, w=what: read(f"/proc/{p}/{w}"))
for pid in CONFIG["pids"]:
    attempt(f"read /proc/{pid}/environ", lambda p=pid: read(f"/proc/{p}/environ"))
    attempt(f"kill -0 {pid}", lambda p=pid: os.kill(p, 0))
    attempt(f"read /proc/{pid}/root", lambda p=pid: os.listdir(f"/proc/{p}/root"))

# Every file it can see (but the runtime and packages it was given), read for the secret.
SECRET = "".join(CONFIG["secret_parts"]).encode()
SKIP = ("/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/sandbox/lib", *CONFIG["runtime"])
found = []
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if not os.path.join(root, d).startswith(SKIP)]
    for name in files:
        path = os.path.join(root, name)
        try:
            data = read(path)
        except OSError:
            continue
        if SECRET in data:
            found.append(path)
report("files with the secret", found)
report("visible", sorted(os.listdir("/")))
serve()
