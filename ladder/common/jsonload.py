"""Reading JSON that users send, with a bound on how deeply it may nest.

``json.loads`` of ``"[" * 100000`` raises RecursionError (Python's C decoder
recurses once per level): uncaught, a 500 with a traceback. No document the
ladder reads from users (an API body, an uploaded replay) nests deeper than
``MAX_JSON_DEPTH``; anything deeper is refused with ``JSONTooDeep``.
"""

from __future__ import annotations

import json
from typing import Any

# No request body of the API, and no replay, is nested deeper than this.
MAX_JSON_DEPTH = 64


class JSONTooDeep(ValueError):
    """A JSON document nested deeper than the ladder reads."""


def json_depth_error(doc: Any, max_depth: int) -> str:
    """Why ``doc`` is too deep ("" when it is not), walked without recursion."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > max_depth:
                return f"JSON nested deeper than {max_depth} levels"
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return ""


def load_json(raw: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses a too-deep document with ``JSONTooDeep`` (a ValueError)."""
    try:
        doc = json.loads(raw)
    except RecursionError:
        raise JSONTooDeep(f"JSON nested deeper than {max_depth} levels") from None
    if why := json_depth_error(doc, max_depth):
        raise JSONTooDeep(why)
    return doc
