"""Build the upload of a house bot as a hosted bot: `python -m examples.hosted_bundle heuristic`.

A hosted bot runs in the sandbox, where it may import only the SDK (`digdown`),
grpcio, protobuf and the standard library. The random and heuristic house bots
wrap players of `engine/players`, so their archive carries those players and the
pure rules code they use (`engine/rules`) next to the bot script, which becomes
the archive's entry point `bot.py`. The starter bot needs nothing and is
uploaded as its single `.py` file.

    python -m examples.hosted_bundle heuristic             # var/uploads/heuristic.zip
    python -m examples.hosted_bundle starter -o mybot.py   # anywhere you like
    # then upload the file as a version of a hosted bot (REST or gRPC UploadVersion)

The archive is reproducible: same sources, same bytes (fixed timestamps, sorted names).
"""

from __future__ import annotations

import argparse
import io
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOUSE_BOTS = {
    "starter": "starter_bot.py",
    "random": "random_bot.py",
    "heuristic": "heuristic_bot.py",
}
# What the wrapped players import, copied as they are (pure code, standard library only).
BUNDLED_PACKAGES = ("engine/rules", "engine/players")
# engine.rules chooses its build (pure or compiled) through this module on import.
BUNDLED_MODULES = ("engine/rules_build.py",)
ZIP_TIME = (2025, 1, 1, 0, 0, 0)
UPLOADS_DIR = "var/uploads"  # under var/, which git ignores


def _add(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    info.external_attr = 0o100644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def build(name: str) -> tuple[str, bytes]:
    """The upload of house bot ``name``: (file name, bytes) as a bot author would send it."""
    if name not in HOUSE_BOTS:
        raise ValueError(f"unknown house bot {name!r}; one of {', '.join(HOUSE_BOTS)}")
    script = (ROOT / "examples" / HOUSE_BOTS[name]).read_bytes()
    if name == "starter":
        return HOUSE_BOTS[name], script
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        _add(zf, "bot.py", script)
        _add(zf, "engine/__init__.py", b"")
        for module in BUNDLED_MODULES:
            _add(zf, module, (ROOT / module).read_bytes())
        for package in BUNDLED_PACKAGES:
            for path in sorted((ROOT / package).glob("*.py")):
                _add(zf, f"{package}/{path.name}", path.read_bytes())
    return f"{name}.zip", buf.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m examples.hosted_bundle", description=__doc__)
    p.add_argument("bot", choices=sorted(HOUSE_BOTS))
    p.add_argument(
        "-o", "--out", type=Path, help=f"output file (default: {UPLOADS_DIR}/<the upload's name>)"
    )
    args = p.parse_args(argv)
    filename, data = build(args.bot)
    # Not the current directory: in a checkout that is the repository root, where a copy of
    # starter_bot.py would sit beside the real one as if it belonged to the project.
    out = args.out or ROOT / UPLOADS_DIR / filename
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    print(f"{out}: {len(data)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
