"""Request body parsers that refuse what they cannot read.

Django's multipart parser skips a part it cannot parse and a body without a single
well-formed part reads as an empty form: a ``POST /tokens/`` with a garbled body
then created a token with no name (found by tests/ladder/api/test_schema_fuzz.py). A
non-empty multipart body that yields no field and no file is a malformed request:
400 with the reason.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, MultiPartParser


class StrictMultiPartParser(MultiPartParser):
    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Any = None
    ) -> DataAndFiles:
        parsed = super().parse(stream, media_type, parser_context)
        request = (parser_context or {}).get("request")
        size = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
        # A well-formed empty form is the closing delimiter alone: "--BOUNDARY--\r\n".
        boundary = (media_type or "").partition("boundary=")[2].split(";")[0].strip('"')
        if size > len(boundary) + 8 and not parsed.data and not parsed.files:
            raise ParseError("malformed multipart body: no field or file could be read")
        return parsed
