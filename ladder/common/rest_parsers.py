"""Request body parsers that refuse what they cannot read.

JSON nested deeper than Python's recursion limit (``"[" * 100000``) raised
RecursionError out of ``json.loads``: a 500 with a traceback. Every JSON the
ladder reads from users goes through ``load_json``, which answers such a
document, or one deeper than the ladder's own documents ever are, with a clear
error (a 400 through the API).

Django's multipart parser skips a part it cannot parse and a body without a single
well-formed part reads as an empty form: a ``POST /tokens/`` with a garbled body
then created a token with no name (found by tests/ladder/api/test_schema_fuzz.py). A
non-empty multipart body that yields no field and no file is a malformed request:
400 with the reason.
"""

from __future__ import annotations

import codecs
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, JSONParser, MultiPartParser

from ladder.common.jsonload import JSONTooDeep, load_json


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with ``load_json``'s depth bound: deep nesting is a 400, not a 500."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.getreader(encoding)(stream).read()
            return load_json(text)
        except JSONTooDeep as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            raise ParseError(f"JSON parse error - {exc}") from None


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
