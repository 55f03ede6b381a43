"""Compile the rules core (`engine/rules`) with mypyc, or say why the pure build stays.

    python -m engine.compile_rules           # build into engine/rules/_compiled/
    python -m engine.compile_rules --clean   # remove it: the pure-Python build runs

`make venv` runs this. The rules are `mypy --strict` clean, so mypyc turns them
into C extension modules that play the very same games several times faster.
Where there is no C compiler, no Python headers or no mypyc, nothing is built
and the exit status is still 0: the package then imports its `.py` sources, as
it does with `DIGDOWN_ENGINE_BUILD=pure`. `engine/rules/__init__.py` decides
which build runs, and refuses a compiled build made from other sources than
the ones on disk (a stale build never runs).

The compiled modules live apart from the sources, in `engine/rules/_compiled/`
(not in git), with `BUILD.json` naming the sources' digest they were built from.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "engine" / "rules"
OUT = RULES / "_compiled"
GROUP = "engine.rules._native"  # the shared library every module's shim loads


def _sources() -> list[Path]:
    """Every rules module except the package's `__init__` (it chooses the build, so stays pure)."""
    return sorted(p for p in RULES.glob("*.py") if p.name != "__init__.py")


def missing_toolchain() -> str:
    """Why a compiled build cannot be made here; empty when it can."""
    try:
        import mypyc  # noqa: F401
        import setuptools  # noqa: F401
    except ImportError as exc:
        return f"mypyc or setuptools is not installed ({exc.name})"
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc!r} is not on PATH)"
    header = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not header.exists():
        return f"no Python headers ({header} is missing; Debian: python3-dev)"
    return ""


def build(jobs: int) -> None:
    """mypyc -> C -> extension modules, built in a scratch directory, then moved in whole."""
    from mypyc.build import mypycify
    from setuptools import Distribution

    sys.path.insert(0, str(ROOT))
    from engine.rules import sources_digest

    digest = sources_digest()
    os.chdir(ROOT)  # mypyc names modules by their path from here (engine/rules/x.py)
    with tempfile.TemporaryDirectory(prefix="digdown-mypyc-") as tmp:
        config = Path(tmp) / "mypy.ini"
        config.write_text("[mypy]\n")  # not the project's: its Django plugins are not wanted here
        modules = [str(p.relative_to(ROOT)) for p in _sources()]
        extensions = mypycify(
            ["--config-file", str(config), "--strict", *modules],
            opt_level="3",
            group_name=GROUP,
            target_dir=str(Path(tmp) / "c"),
        )
        dist = Distribution({"ext_modules": extensions, "script_name": "compile_rules"})
        cmd = dist.get_command_obj("build_ext")
        cmd.build_lib = str(Path(tmp) / "lib")  # type: ignore[attr-defined]
        cmd.build_temp = str(Path(tmp) / "obj")  # type: ignore[attr-defined]
        cmd.parallel = jobs  # type: ignore[attr-defined]
        cmd.ensure_finalized()
        cmd.run()
        built = Path(tmp) / "lib" / "engine" / "rules"
        staging = Path(tmp) / "_compiled"
        staging.mkdir()
        for lib in built.iterdir():
            shutil.copy2(lib, staging / lib.name)
        (staging / "BUILD.json").write_text(
            json.dumps(
                {
                    "sources_sha256": digest,
                    "modules": sorted(p.stem for p in _sources()),
                    "python": sys.implementation.cache_tag,
                    "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                },
                indent=1,
            )
        )
        if OUT.exists():
            shutil.rmtree(OUT)
        shutil.move(str(staging), OUT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.compile_rules", description=__doc__)
    parser.add_argument("--clean", action="store_true", help="remove the compiled build")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="C compile jobs")
    args = parser.parse_args(argv)
    if args.clean:
        shutil.rmtree(OUT, ignore_errors=True)
        print("rules core: compiled build removed; the pure-Python build runs")
        return 0
    why = missing_toolchain()
    if why:
        print(f"rules core: not compiled, {why}; the pure-Python build runs (same games, slower)")
        return 0
    started = time.perf_counter()
    print(f"rules core: compiling {len(_sources())} modules with mypyc ...", flush=True)
    try:
        build(args.jobs)
    except Exception as exc:  # a broken toolchain must not break `make venv`: say so, run pure
        print(f"rules core: compiling failed ({type(exc).__name__}: {exc}); the pure build runs")
        shutil.rmtree(OUT, ignore_errors=True)
        return 0
    took = time.perf_counter() - started
    print(f"rules core: compiled into {OUT.relative_to(ROOT)} in {took:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
