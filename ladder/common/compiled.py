"""Queries whose SQL the ORM writes once per thread, then runs with other arguments.

A page's reads have fixed shapes (the same joins, filters and order for every bot),
and the ORM rebuilt and compiled each one on every request. ``Compiled`` builds its
query once with marker arguments, keeps the SQL and where each marker went among its
parameters, and runs it with the real ones; the rows come back through the compiler's converters, as
``values_list`` gives them. The ORM stays the one description of the query: the
markers only stand where the arguments go.

Markers are values no query holds as constants (ids above two billion, a NUL-prefixed string); each
must reach the parameters unchanged (a filter's value, not a pattern of ``contains``),
which compiling checks. A slice is a pair of markers too (``LIMIT``/``OFFSET`` are
written into the SQL, not passed): see ``SLICE``.

This drives Django's SQL compiler (``get_compiler``, ``as_sql``, ``select``,
``col_count``, ``get_converters``, ``apply_converters``), which Django does not document
as public: the one module that does. What it buys - a bot page's reads at less than half
the CPU - is measured in docs/benchmark-report.md, "Private library internals kept";
tests/ladder/test_compiled_canary.py fails the day Django moves what it relies on, and
tests/ladder/test_compiled_queries.py compares its rows with the ORM's.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connections
from django.db.models import QuerySet

SLICE = (7_100_003, 9_200_011)
"""Build a sliced query as ``qs[SLICE[0] : SLICE[0] + SLICE[1]]`` (offset, limit) and pass
``offset=`` and ``limit=`` to ``rows``: the SQL ends in those two numbers, made parameters."""

_local = threading.local()


def marker(n: int) -> int:
    """The ``n``-th integer marker: a value no query of ours holds as a constant, within a
    positive 32-bit column's range (the ORM answers a value outside a column's range
    with no query at all)."""
    return 2_000_000_000 + n


def text_marker(n: int) -> str:
    """The ``n``-th string marker."""
    return f"\x00marker-{n}"


class _Plan:
    def __init__(self, qs: QuerySet[Any], markers: Sequence[Any], sliced: bool) -> None:
        self.alias = qs.db
        self.compiler = qs.query.get_compiler(using=qs.db)
        sql, params = self.compiler.as_sql()
        # Per parameter: an argument's index and the type the backend wrapped it in (the
        # PostgreSQL backend passes some integers as ``Int4``), or a constant.
        self.slots: list[tuple[int | None, Any]] = []
        found: set[int] = set()
        for p in params:
            hit = next(
                (i for i, m in enumerate(markers) if isinstance(p, type(m)) and p == m), None
            )
            if hit is None:
                self.slots.append((None, p))
            else:
                self.slots.append((hit, None if type(p) is type(markers[hit]) else type(p)))
                found.add(hit)
        if found != set(range(len(markers))):
            raise ValueError(f"markers {sorted(set(range(len(markers))) - found)} not in the SQL")
        if sliced:
            tail = f" LIMIT {SLICE[1]} OFFSET {SLICE[0]}"
            if not sql.endswith(tail):
                raise ValueError("a sliced query must end in its LIMIT and OFFSET")
            sql = sql[: -len(tail)] + " LIMIT %s OFFSET %s"
        self.sql = sql
        self.sliced = sliced
        fields = [s[0] for s in self.compiler.select[: self.compiler.col_count]]
        self.converters = self.compiler.get_converters(fields)


class Compiled:
    """A ``values_list`` query built by ``build(*markers)``, compiled on first use in each
    thread (a thread has its own connection) and run by ``rows(*args)``."""

    def __init__(
        self, build: Callable[..., QuerySet[Any]], markers: Sequence[Any], *, sliced: bool = False
    ) -> None:
        self.build = build
        self.markers = tuple(markers)
        self.sliced = sliced

    def _plan(self) -> _Plan:
        plans: weakref.WeakKeyDictionary[Compiled, _Plan] = _local.__dict__.setdefault(
            "plans", weakref.WeakKeyDictionary()
        )
        plan = plans.get(self)
        if plan is None:
            plan = plans[self] = _Plan(self.build(*self.markers), self.markers, self.sliced)
        return plan

    def sql_params(
        self, *args: Any, offset: int = 0, limit: int | None = None
    ) -> tuple[str, list[Any]]:
        """The SQL and its parameters for ``args``, to run inside a larger statement (rows
        read that way skip the converters ``rows`` applies)."""
        return _bind(self._plan(), args, offset, limit)

    def rows(self, *args: Any, offset: int = 0, limit: int | None = None) -> list[tuple[Any, ...]]:
        plan = self._plan()
        sql, params = _bind(plan, args, offset, limit)
        with connections[plan.alias].cursor() as cursor:
            cursor.execute(sql, params)
            fetched = cursor.fetchall()
        if not plan.converters:
            return [tuple(row) for row in fetched]
        return [tuple(row) for row in plan.compiler.apply_converters(fetched, plan.converters)]


def _bind(
    plan: _Plan, args: tuple[Any, ...], offset: int, limit: int | None
) -> tuple[str, list[Any]]:
    """``plan``'s SQL and its parameters with ``args`` in the markers' places."""
    params = [v if i is None else args[i] if v is None else v(args[i]) for i, v in plan.slots]
    if plan.sliced:
        if limit is None:
            raise ValueError("a sliced query needs its limit")
        params += [limit, offset]
    return plan.sql, params
