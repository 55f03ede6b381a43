"""What a hosted bot sees of the machine: the filesystem view handed to bubblewrap.

Everything is read-only except its scratch directory and its socket directory:

- the shared system libraries (``/usr/lib``, ``/lib``...) the interpreter links against;
- the worker's Python interpreter (executable, ``libpython`` when shared, standard
  library), with every site-packages directory of that installation masked by an
  empty tmpfs, so nothing installed on the machine is importable by accident;
- the packages a bot may use, each bound alone under ``/sandbox/lib`` (on
  ``PYTHONPATH``): the SDK ``digdown``, grpcio, its health and reflection
  services, protobuf. Not the project, not the virtualenv, not the database,
  ``var/``, media, settings or other bots.

Paths are found from the running interpreter (``sysconfig``, ``importlib``), so
the view follows wherever Python and the packages are installed.
"""

from __future__ import annotations

import importlib.util
import os
import site
import sys
import sysconfig
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath

# Importable in the sandbox: the SDK and what it runs on (dotted name -> bound alone).
ALLOWED_PACKAGES: tuple[str, ...] = (
    "digdown",
    "grpc",
    "grpc_health",
    "grpc_reflection",
    "google.protobuf",
    "google._upb",
    "typing_extensions",  # grpc.aio imports it
)
LIB_DIR = "/sandbox/lib"
BOOT = "/sandbox/boot.py"
SYSTEM_LIB_DIRS = ("/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64", "/usr/lib32")
SYSTEM_FILES = ("/etc/ld.so.cache",)


@dataclass(frozen=True)
class Mount:
    """One bubblewrap filesystem operation: ``kind`` is ro-bind, symlink or mask."""

    kind: str
    source: str
    dest: str


@dataclass(frozen=True)
class RuntimeView:
    """The read-only part of every sandbox: the interpreter, libraries and packages."""

    python: str
    mounts: tuple[Mount, ...] = field(default_factory=tuple)

    def args(self) -> list[str]:
        """bubblewrap arguments for these mounts (parent directories created 0755)."""
        out: list[str] = []
        made: set[str] = {"/"}
        for m in self.mounts:
            for parent in reversed(PurePosixPath(m.dest).parents):
                p = str(parent)
                if p not in made:
                    out += ["--perms", "0755", "--dir", p]
                    made.add(p)
            if m.kind == "symlink":
                out += ["--symlink", m.source, m.dest]
            elif m.kind == "mask":
                out += ["--perms", "0555", "--tmpfs", m.dest]
            else:
                out += ["--ro-bind", m.source, m.dest]
            made.add(m.dest)
        return out


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _module_mount(name: str) -> Mount:
    """A package directory, or a single-file module, bound under ``LIB_DIR``."""
    spec = importlib.util.find_spec(name)
    dest = PurePosixPath(LIB_DIR, *name.split("."))
    if spec is not None and spec.submodule_search_locations:
        source = os.path.realpath(next(iter(spec.submodule_search_locations)))
        return Mount("ro-bind", source, str(dest))
    if spec is not None and spec.origin and os.path.isfile(spec.origin):
        source = os.path.realpath(spec.origin)
        return Mount("ro-bind", source, str(dest) + "".join(PurePosixPath(source).suffixes))
    raise ModuleNotFoundError(f"{name} is not installed, so the sandbox cannot offer it")


@cache
def runtime_view(packages: tuple[str, ...] = ALLOWED_PACKAGES) -> RuntimeView:
    """The interpreter and packages of this process, as the sandbox will see them."""
    mounts: list[Mount] = []
    bound: list[str] = []
    for d in SYSTEM_LIB_DIRS:
        if os.path.islink(d):
            mounts.append(Mount("symlink", os.readlink(d), d))
        elif os.path.isdir(d):
            mounts.append(Mount("ro-bind", d, d))
            bound.append(d)
    for f in SYSTEM_FILES:
        if os.path.isfile(f):
            mounts.append(Mount("ro-bind", f, f))
    python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    runtime = [python, sysconfig.get_path("stdlib", vars=base)]
    runtime.append(sysconfig.get_path("platstdlib", vars=base))
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        libdir = sysconfig.get_config_var("LIBDIR") or ""
        soname = sysconfig.get_config_var("INSTSONAME") or ""
        runtime.append(os.path.join(libdir, soname))
    for path in runtime:
        real = os.path.realpath(path)
        if os.path.exists(real) and not _inside(real, bound):
            mounts.append(Mount("ro-bind", real, real))
            bound.append(real)
    for sp in site.getsitepackages([sys.base_prefix, sys.base_exec_prefix]):
        real = os.path.realpath(sp)
        if os.path.isdir(real) and _inside(real, bound):
            mounts.append(Mount("mask", "", real))
    mounts += [_module_mount(name) for name in packages]
    mounts.append(Mount("ro-bind", str(Path(__file__).with_name("boot.py")), BOOT))
    return RuntimeView(python=python, mounts=tuple(mounts))
