"""Keyset pages of the leaderboard: every page walked, no row twice, none missed, under inserts.

The board is built with ties in score (the id breaks them), walked through the
REST API's cursors, the site's next/previous links and the selector the gRPC
leaderboard pages with; bots added while a walk is under way never make a row
of the original board appear twice or go missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape
from typing import Any

import pytest
from rest_framework.test import APIClient

from ladder.common import keyset
from ladder.ratings.models import BotRating
from ladder.ratings.selectors import leaderboard_list

SCORES = [900, 700, 700, 700, 500, 500, 300, 100, 100, 100, 100, -50, -50]


@pytest.fixture
def board(make_user: Callable[..., Any], make_bot: Callable[..., Any]) -> list[str]:
    """Bots with tied scores; their names in the board's order (score desc, id)."""
    owner = make_user("kay")
    bots = [make_bot(owner, f"kb-{i:02d}") for i in range(len(SCORES))]
    for bot, score in zip(bots, SCORES, strict=True):
        BotRating.objects.filter(bot=bot).update(score=score)
    return [b.name for b in sorted(bots, key=lambda b: (-SCORES[bots.index(b)], b.pk))]


def add_bot(
    make_user: Callable[..., Any], make_bot: Callable[..., Any], name: str, score: int
) -> None:
    owner = make_user(f"o-{name}")
    bot = make_bot(owner, name)
    BotRating.objects.filter(bot=bot).update(score=score)


def test_rest_cursor_walks_every_page_once_under_inserts(
    board: list[str], make_user: Callable[..., Any], make_bot: Callable[..., Any]
) -> None:
    client = APIClient()
    first = client.get("/api/v1/leaderboard/?page_size=3&cursor=").json()
    seen = [r["name"] for r in first["results"]]
    positions = [r["position"] for r in first["results"]]
    url = first["next"]
    pages = 1
    while url:
        if pages == 2:  # inserts ahead of the cursor, on it (a tie) and behind it
            add_bot(make_user, make_bot, "kb-top", 1000)
            add_bot(make_user, make_bot, "kb-tie", 500)
            add_bot(make_user, make_bot, "kb-low", -100)
        body = client.get(url).json()
        seen += [r["name"] for r in body["results"]]
        positions += [r["position"] for r in body["results"]]
        url = body["next"]
        pages += 1
    original = [n for n in seen if n in board]
    assert original == board  # every row once, in order
    assert len(seen) == len(set(seen))
    assert "kb-top" not in seen and "kb-low" in seen  # a row ahead of the cursor is not re-read
    assert positions == list(range(1, len(seen) + 1))


def test_rest_cursor_wins_over_page_and_bad_cursors_start_over(board: list[str]) -> None:
    client = APIClient()
    first = client.get("/api/v1/leaderboard/?page_size=4&cursor=").json()
    both = client.get(first["next"] + "&page=3")
    assert both.status_code == 200
    assert [r["name"] for r in both.json()["results"]] == board[4:8]
    assert (
        client.get("/api/v1/leaderboard/?page_size=4&page=2").json()["results"]
        == both.json()["results"]
    )
    for bad in ("nope", "k", "k!!", "kZm9v", "x" * 100):
        r = client.get("/api/v1/leaderboard/", {"page_size": 4, "cursor": bad})
        assert r.status_code == 200, bad
        assert [e["name"] for e in r.json()["results"]] == board[:4]


def test_backward_pages_mirror_forward_ones(board: list[str]) -> None:
    qs = leaderboard_list()
    forward, token = [], ""
    while True:
        page = keyset.board_page(qs, 4, token)
        forward.append(([b.name for b in page.rows], page.before))
        if not page.next:
            break
        last, token = page, page.next
    backward, token = [], last.next
    # From the last page back to the first through the previous cursors.
    page = keyset.board_page(qs, 4, token)
    while True:
        backward.append(([b.name for b in page.rows], page.before))
        if not page.previous:
            break
        page = keyset.board_page(qs, 4, page.previous)
    assert backward[::-1] == forward
    assert [n for names, _ in forward for n in names] == board


def test_site_next_links_walk_the_board(client: Any, board: list[str]) -> None:
    url, names, numbers = "/?page_size=10", [], []
    while url:
        html = client.get(url).content.decode()
        names += re.findall(r'<tr data-bot="([^"]+)"', html)
        numbers += re.findall(r'class="page-of">Page (\d+) of', html)
        found = re.search(r'rel="next" href="([^"]+)"', html)
        url = "/" + unescape(found.group(1)) if found else ""
        assert not url or "cursor=" in url
    assert names == board and numbers == ["1", "2"]
    prev = re.search(r'rel="prev" href="([^"]+)"', html)
    assert prev and "cursor=" in prev.group(1)
    back = client.get("/" + unescape(prev.group(1))).content.decode()
    assert re.findall(r'<tr data-bot="([^"]+)"', back) == board[:10]
