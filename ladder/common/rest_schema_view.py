"""The view that serves the OpenAPI document (``/api/schema/``)."""

from __future__ import annotations

import threading
from typing import Any

from drf_spectacular.views import SpectacularAPIView


class SchemaView(SpectacularAPIView):
    """The OpenAPI document, generated one request at a time in each process.

    drf-spectacular loads its extension classes lazily and not thread-safely: two
    threads generating the first schema of a process at once (gunicorn's gthread
    workers) made one of them fail with a 500 (found by tests/ladder/api/test_schema_fuzz.py).
    """

    _lock = threading.Lock()

    def _get_schema_response(self, request: Any) -> Any:
        with self._lock:
            return super()._get_schema_response(request)
