"""Every environment variable the ladder reads, declared once: name, type, default, unit, why.

An operator needs one table of what can be set; a developer needs one place where
a variable is read, so that its default and its meaning cannot differ between two
readers. Each settings module reads its variables through an ``Environment`` of its
part (``Environment("database").integer(...)``); every read declares the variable in
``REGISTRY``, and ``python -m ladder.settings.reference`` renders the registry as
``docs/settings.md`` (a test fails when the committed page differs).

Variables that processes outside Django read (the SDK's bots, the engine, gunicorn's
configuration, the metrics server) are declared with ``Environment.elsewhere``: they
are listed in the same table with the module that reads them, and a test checks that
module still names them.

This module imports nothing of Django or of the ladder, so gunicorn's configuration
file can read its variables the same way before Django is set up.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
TRUE = frozenset({"1", "true", "yes", "on"})


@dataclass(frozen=True)
class Variable:
    """One environment variable as the reference table shows it."""

    name: str
    part: str
    kind: str  # text, integer, number, flag, list
    default: str  # as an operator would write it; "" for none
    unit: str
    why: str
    read_by: str


REGISTRY: dict[str, Variable] = {}


def declare(variable: Variable) -> None:
    """Add a variable; declaring one twice with other terms is a programming error."""
    known = REGISTRY.get(variable.name)
    if known is not None and known != variable:
        raise RuntimeError(f"{variable.name} is declared twice, differently: {known} / {variable}")
    REGISTRY[variable.name] = variable


def _shown(default: object) -> str:
    if isinstance(default, bool):
        return "1" if default else "0"
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    if isinstance(default, list | tuple):
        return ",".join(str(d) for d in default)
    return "" if default is None else str(default)


class Environment:
    """The variables of one part of the settings, read from ``environ``."""

    def __init__(self, part: str, environ: Mapping[str, str] | None = None) -> None:
        self.part = part
        self.environ = os.environ if environ is None else environ
        # The module that reads them, for the reference's "read by" column.
        self.module = sys._getframe(1).f_globals.get("__name__", "?").replace(".", "/") + ".py"

    def _read(
        self,
        name: str,
        kind: str,
        default: T,
        parse: Callable[[str], T],
        *,
        why: str,
        unit: str,
        shown: str | None,
    ) -> T:
        declare(Variable(name, self.part, kind, _shown(default) if shown is None else shown,
                         unit, why, read_by=self.module))  # fmt: skip
        raw = self.environ.get(name, "")
        if raw.strip() == "":
            return default
        try:
            return parse(raw.strip())
        except ValueError as exc:
            raise RuntimeError(f"{name}={raw!r} is not a valid {kind}: {exc}") from exc

    def text(self, name: str, default: str, *, why: str, unit: str = "",
             shown: str | None = None) -> str:  # fmt: skip
        return self._read(name, "text", default, str, why=why, unit=unit, shown=shown)

    def optional_text(self, name: str, *, why: str, shown: str = "") -> str | None:
        """A text whose absence means something else than any value (None when unset)."""
        return self._read(name, "text", None, str, why=why, unit="", shown=shown)

    def integer(self, name: str, default: int, *, why: str, unit: str = "",
                shown: str | None = None) -> int:  # fmt: skip
        return self._read(name, "integer", default, int, why=why, unit=unit, shown=shown)

    def number(self, name: str, default: float, *, why: str, unit: str = "",
               shown: str | None = None) -> float:  # fmt: skip
        return self._read(name, "number", default, float, why=why, unit=unit, shown=shown)

    def optional_number(self, name: str, *, why: str, unit: str = "",
                        shown: str = "") -> float | None:  # fmt: skip
        return self._read(name, "number", None, float, why=why, unit=unit, shown=shown)

    def flag(self, name: str, default: bool, *, why: str, shown: str | None = None) -> bool:
        return self._read(name, "flag", default, lambda raw: raw.lower() in TRUE, why=why,
                          unit="1/0", shown=shown)  # fmt: skip

    def items(
        self, name: str, default: str = "", *, why: str, shown: str | None = None
    ) -> list[str]:
        """A comma-separated list, without empty items."""
        return self._read(name, "list", split(default), split, why=why, unit="comma list",
                          shown=default if shown is None else shown)  # fmt: skip

    def choice(self, name: str, default: str, choices: tuple[str, ...], *, why: str) -> str:
        value = self.text(name, default, why=f"{why} ({' or '.join(choices)})")
        if value not in choices:
            raise RuntimeError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
        return value

    def elsewhere(self, name: str, default: str, *, read_by: str, why: str, unit: str = "") -> None:
        """A variable a process outside Django reads itself (listed, not read here)."""
        declare(Variable(name, self.part, "text", default, unit, why, read_by=read_by))


def split(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]
