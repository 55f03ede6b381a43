"""Write outside its own directory; fill its disk."""

import os

from probe import CONFIG, attempt, serve


def write(path, size=16):
    def go():
        with open(path, "wb") as fh:
            fh.write(b"x" * size)
        return path

    return go


def fill(directory, files, size):
    def go():
        os.makedirs(directory, exist_ok=True)
        for i in range(files):
            write(os.path.join(directory, f"{i}.bin"), size)()
        return files * size

    return go


for path in CONFIG["targets"]:
    attempt(f"write {path}", write(path))
attempt("write own dir", write("/bot/mine.txt"))
attempt("write tmp", write("/tmp/mine.txt"))
attempt("write a 32 MiB file", write("/bot/tmp/big.bin", 32 * 1024 * 1024))
attempt("fill scratch with 12 MiB files", fill("/bot/tmp/fill", 16, 12 * 1024 * 1024))
late = []


def act(observation, legal):
    if not late:  # once serving, its socket directory takes nothing more
        late.append(attempt("write /run/bot/late", write("/run/bot/late")))
    return 0


serve(act)
