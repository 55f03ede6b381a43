"""A bot that answers well-formed actions that are never legal (a tool it does not own)."""

from __future__ import annotations

from _common import args

from digdown.bot import serve

opts = args([])


def act(observation: dict, legal: list) -> object:
    return {"kind": "COMMIT", "tool_id": 999}


serve(act, listen=opts.listen, name="illegal", version="1", port_file=opts.port_file)
