"""Logging filters of the ladder's own.

Django logs a refused request (403 ``PermissionDenied``, e.g. a staff member
opening an admin page they have no permission for) on ``django.request`` with
the exception attached, so every refusal printed a whole traceback. A 4xx is
the client's doing, not a fault of the server: it stays a one-line warning.
"""

from __future__ import annotations

import logging


class ClientErrorWithoutTraceback(logging.Filter):
    """Drop the traceback of a record about a 4xx response (5xx keep theirs)."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
