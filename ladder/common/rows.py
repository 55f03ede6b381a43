"""Updates of a few rows, each its own values, without the ORM's ``CASE`` expressions.

``QuerySet.bulk_update`` writes N rows in one ``UPDATE ... SET f = CASE pk WHEN ...``:
for the two to four rows of a match's result (its seats, its bots' rating entries)
building those expressions (a ``When`` and a ``Value`` per row and field, each
resolved and compiled, casts on PostgreSQL) cost more than the statement itself,
about half of the result's transaction. Here the statement is one plain ``UPDATE``
per row sent with ``executemany`` (one call; psycopg pipelines the rows), its text
made once per model and fields, the values prepared by each field as ``save``
prepares them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from django.db import connections, router
from django.db.models import Model


@cache
def _statement(model: type[Model], fields: tuple[str, ...], vendor: str) -> tuple[str, list[Any]]:
    meta = model._meta
    concrete: list[Any] = [meta.get_field(name) for name in fields]
    quote = connections[router.db_for_write(model)].ops.quote_name
    assignments = ", ".join(f"{quote(f.column)} = %s" for f in concrete)
    pk: Any = meta.pk
    sql = f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {quote(pk.column)} = %s"
    return sql, concrete


def rows_update(objects: Sequence[Model], fields: Sequence[str]) -> None:
    """Write ``fields`` of every object (all of one model) to its row, as
    ``bulk_update(objects, fields)`` would; no signals, no ``auto_now``."""
    if not objects:
        return
    model = type(objects[0])
    alias = router.db_for_write(model)
    connection = connections[alias]
    sql, concrete = _statement(model, tuple(fields), connection.vendor)
    pk: Any = model._meta.pk
    params = [
        [f.get_db_prep_save(getattr(obj, f.attname), connection) for f in concrete]
        + [pk.get_db_prep_value(obj.pk, connection)]
        for obj in objects
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)
