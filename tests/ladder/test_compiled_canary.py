"""Canary: the parts of Django's SQL compiler that ``ladder.common.compiled`` drives are
still there and still behave as it relies on (docs/benchmark-report.md, "Private library
internals kept"). The rows themselves are compared with the ORM's in
tests/ladder/test_compiled_queries.py; this names what a Django upgrade could move: the
compiler's methods and attributes, a filter's value passed unchanged among the
parameters, and a slice written into the SQL's end as ``LIMIT n OFFSET m``."""

from __future__ import annotations

import pytest
from django.db.models.sql.compiler import SQLCompiler

from ladder.common.compiled import SLICE, Compiled, marker, text_marker
from ladder.matches.models import MatchSeat

pytestmark = pytest.mark.django_db


def test_djangos_compiler_has_what_compiled_drives() -> None:
    names = ("as_sql", "get_converters", "apply_converters", "select", "col_count")
    qs = MatchSeat.objects.filter(bot_id=marker(1)).values_list("match_id", "match__created_at")
    compiler = qs.query.get_compiler(using=qs.db)
    assert isinstance(compiler, SQLCompiler)
    _sql, params = compiler.as_sql()  # fills select and col_count
    assert [n for n in names if not hasattr(compiler, n)] == []
    assert compiler.col_count == 2 and len(compiler.select) >= 2
    fields = [s[0] for s in compiler.select[: compiler.col_count]]
    converters = compiler.get_converters(fields)
    assert isinstance(converters, dict)
    # A filter's value reaches the parameters as given (or wrapped in a subclass of its type).
    assert any(isinstance(p, int) and p == marker(1) for p in params)


def test_markers_and_a_slice_are_found_in_the_sql() -> None:
    query = Compiled(
        lambda b, s: (
            MatchSeat.objects.filter(bot_id=b, match__status=s)
            .order_by("-match_id")
            .values_list("match_id", "seat")[SLICE[0] : SLICE[0] + SLICE[1]]
        ),
        [marker(1), text_marker(1)],
        sliced=True,
    )
    sql, params = query.sql_params(7, "finished", offset=3, limit=5)
    assert sql.endswith(" LIMIT %s OFFSET %s")
    assert 7 in params and "finished" in params and params[-2:] == [5, 3]
    assert str(marker(1)) not in sql and "marker" not in sql
