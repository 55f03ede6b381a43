"""The ladder's PostgreSQL connections run without JIT compilation (``LADDER_DB_JIT``):
its queries read pages of rows, and JIT spent 10-30 ms compiling plans that run in 1 ms."""

from __future__ import annotations

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_postgresql_connections_turn_jit_off() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("JIT is PostgreSQL's")
    with connection.cursor() as cur:
        cur.execute("SHOW jit")
        assert cur.fetchone()[0] == "off"
