"""HTML is built so that escaping is the default: templates, or ``format_html``.

Rows of the busiest pages are built in Python (``ladder/web/rows.py``) for speed;
they were f-strings with an ``escape()`` around each value and ``mark_safe`` on
the result, so one forgotten ``escape`` was an XSS no test would notice. This
scan of every module of ``ladder/`` fails on:

- any call of ``mark_safe`` or construction of ``SafeString``/``SafeText``: a
  string is only safe when ``format_html`` (or ``format_html_join``) escaped what
  went into it, or a template did;
- a ``format_html``/``format_html_join`` whose format is not a literal string (an
  f-string or a variable there would be trusted whole, unescaped);
- ``|safe``, ``|safeseq`` or ``{% autoescape off %}`` in a template.

Then the rows themselves are rendered with a hostile bot name, owner, tournament
and suspension reason: none of it comes out as markup.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LADDER = ROOT / "ladder"
TRUSTING = {"mark_safe", "SafeString", "SafeText"}
FORMATS = {"format_html": 0, "format_html_join": 1}  # function -> index of its format


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def violations(source: str, where: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        if name in TRUSTING:
            found.append(f"{where}:{node.lineno}: {name}() trusts a string nothing escaped")
        elif name in FORMATS:
            index = FORMATS[name]
            fmt = node.args[index] if len(node.args) > index else None
            if not (isinstance(fmt, ast.Constant) and isinstance(fmt.value, str)):
                found.append(f"{where}:{node.lineno}: {name}() with a format that is not a literal")
    return found


def test_the_scan_sees_what_it_forbids() -> None:
    bad = (
        "from django.utils.safestring import mark_safe, SafeString\n"
        "from django.utils.html import format_html\n"
        "a = mark_safe(f'<b>{x}</b>')\n"
        "b = SafeString('<i>' + x)\n"
        "c = format_html(f'<b>{x}</b>')\n"
        "d = format_html('<b>{}</b>', x)\n"
    )
    assert [v.split(": ", 1)[0] for v in violations(bad, "m.py")] == ["m.py:3", "m.py:4", "m.py:5"]


def test_no_module_of_the_ladder_trusts_unescaped_html() -> None:
    found = []
    for path in sorted(LADDER.rglob("*.py")):
        found += violations(path.read_text(), str(path.relative_to(ROOT)))
    assert not found, "\n".join(found)


def test_no_template_turns_escaping_off() -> None:
    pattern = re.compile(r"\|\s*safe(seq)?\b|{%\s*autoescape\s+off")
    found = [
        f"{path.relative_to(ROOT)}: {m.group(0)}"
        for path in sorted(LADDER.rglob("*.html"))
        for m in pattern.finditer(path.read_text())
    ]
    assert not found, found


EVIL = "<script>alert(1)</script>\"'&"


@pytest.mark.django_db
def test_pages_built_from_rows_escape_every_value(make_user: Any, make_bot: Any) -> None:
    from django.test import Client

    from ladder.bots.models import Bot
    from ladder.matches.creation import match_create
    from ladder.tournaments.models import Tournament

    owner = make_user("evil-owner")
    a, b = make_bot(owner, "evil-a"), make_bot(make_user("plain"), "plain-b")
    cup = Tournament.objects.create(name=EVIL)
    cup.participants.set([a, b])
    match_create(bot_ids=[a.pk, b.pk], tournament=cup, rated=False)
    # Past the name rules, as a row written by anything else could be.
    owner.username = EVIL
    owner.save(update_fields=["username"])
    Bot.objects.filter(pk=a.pk).update(name="a<b>&c", is_active=False, suspended_reason=EVIL)
    client = Client()
    for url in ("/", "/?include_inactive=1", f"/bots/{a.pk}/", f"/bots/{b.pk}/",
                f"/tournaments/{cup.pk}/", "/tournaments/", "/now/"):  # fmt: skip
        html = client.get(url).content.decode()
        assert "<script>alert" not in html and "a<b>" not in html, url
    assert "a&lt;b&gt;&amp;c" in client.get(f"/bots/{b.pk}/").content.decode()
