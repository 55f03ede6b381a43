"""Every limit and quota of the ladder holds when many requests arrive at once.

Sequentially every limit held exactly; at one instant ten sign-ups from one
address made eight accounts under a limit of five (the check counted, then the
account was made: every request that arrived before the first one finished
passed the check). Here each limit gets a burst of ``N`` requests released
together by a barrier, from threads over real HTTP connections, against the
production web server (gunicorn, two worker processes, threads; no shared cache,
so any limit kept in one process's memory is beaten across processes), and the
test counts what got through: never more than the limit.

Runs on SQLite (its write lock serialises transactions: BEGIN IMMEDIATE) and on
PostgreSQL (row locks and conditional updates), so each mechanism is seen on both.
Connected-stream limits are tested with the Play stream (tests/ladder/grpc/connected).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from http.cookies import SimpleCookie
from typing import Any

import pytest

from ladder.accounts.models import ApiToken, User
from ladder.accounts.services import MAX_ACTIVE_TOKENS, token_create
from ladder.bots.models import Bot, BotVersion
from ladder.matches.models import Match
from ladder.tournaments.models import VersionComparison
from tests.support.processes import Proc, start_gunicorn
from tests.support.web_server import collect_static, production_env

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.sqlite_too,
    pytest.mark.timeout(300),
]

N = 10  # requests in each burst
SIGNUPS = 3  # per address and hour
BOTS = 3  # per user
OPEN_CHALLENGES, CHALLENGES_PER_DAY = 3, 5
OPEN_COMPARISONS, COMPARISONS_PER_DAY = 2, 3
VERSIONS = 3  # stored per bot
BYTES = 2500  # stored per user
EXPORTS = 3  # per user and hour
VIEWER_UPLOADS = 3  # per address and hour
PASSWORD = "deep-cave-torch-42"

# What got through each burst, for the report (printed by the last test: -s shows it).
THROUGH: dict[str, tuple[int, int]] = {}


@pytest.fixture(scope="module")
def server(
    django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Proc]:
    tmp = tmp_path_factory.mktemp("limits")
    static_root = collect_static(tmp / "static")
    with django_db_blocker.unblock():
        env = production_env(
            media_root=str(tmp / "media"),
            static_root=static_root,
            tmp=tmp,
            LADDER_SIGNUPS_PER_ADDRESS=f"{SIGNUPS}/hour",
            LADDER_QUOTA_BOTS_PER_USER=str(BOTS),
            LADDER_QUOTA_OPEN_CHALLENGES=str(OPEN_CHALLENGES),
            LADDER_QUOTA_CHALLENGES_PER_DAY=str(CHALLENGES_PER_DAY),
            LADDER_COMPARISONS_OPEN_PER_USER=str(OPEN_COMPARISONS),
            LADDER_QUOTA_COMPARISONS_PER_DAY=str(COMPARISONS_PER_DAY),
            LADDER_QUOTA_VERSIONS_PER_BOT=str(VERSIONS),
            LADDER_QUOTA_BYTES_PER_USER=str(BYTES),
            LADDER_EXPORT_THROTTLE=f"{EXPORTS}/hour",
            LADDER_VIEWER_UPLOAD_RATE=f"{VIEWER_UPLOADS}/hour",
            LADDER_WEB_THREADS="8",
        )
    proc = start_gunicorn(env, tmp, workers=2)
    yield proc
    assert proc.stop(timeout_s=15) == 0, proc.log()[-3000:]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a redirect is an answer here (a made account), not a next request


_OPENER = urllib.request.build_opener(_NoRedirect)


def http(
    server: Proc,
    method: str,
    path: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes, Any]:
    """One request on its own connection: (status, body, headers)."""
    request = urllib.request.Request(
        f"http://{server.address}{path}", data=body, method=method, headers=headers or {}
    )
    try:
        with _OPENER.open(request, timeout=60) as reply:
            return reply.status, reply.read(), reply.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers


def away_from_a_window_edge(period_s: int = 3600, margin_s: float = 30.0) -> None:
    """Wait until the burst cannot straddle the edge of an aligned window.

    The per-window limits (sign-ups, uploads, exports an hour) count in windows aligned
    on the clock: a burst that straddles an edge may take the limit in each of the
    two windows, as a fixed window allows; the test counts one window's worth."""
    into = time.time() % period_s
    if into > period_s - margin_s:
        time.sleep(period_s - into + 1)


def burst(send: Callable[[int], int], n: int = N) -> list[int]:
    """``send(i)`` from ``n`` threads released together; their statuses."""
    away_from_a_window_edge()
    barrier = threading.Barrier(n)
    statuses = [0] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=60)
            statuses[i] = send(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert all(s for s in statuses), statuses
    assert not [s for s in statuses if s >= 500], statuses
    return statuses


def api(server: Proc, token: str, method: str, path: str, data: Any = None) -> int:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    body = None if data is None else json.dumps(data).encode()
    return http(server, method, path, body=body, headers=headers)[0]


def multipart(fields: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    out = b""
    for name, (filename, data) in fields.items():
        out += (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
            ).encode()
            + data
            + b"\r\n"
        )
    return out + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def upload(server: Proc, token: str, bot_id: int, data: bytes) -> int:
    body, content_type = multipart({"file": ("bot.py", data)})
    headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}
    return http(server, "POST", f"/api/v1/bots/{bot_id}/versions/", body=body, headers=headers)[0]


def through(name: str, statuses: list[int], ok: set[int], limit: int) -> int:
    n = sum(s in ok for s in statuses)
    THROUGH[name] = (n, limit)
    return n


# --- per address -----------------------------------------------------------------------


def test_sign_ups_per_address(server: Proc) -> None:
    status, page, headers = http(server, "GET", "/accounts/signup/")
    assert status == 200
    cookie = SimpleCookie(headers["Set-Cookie"])["csrftoken"].value
    form_token = page.split(b'name="csrfmiddlewaretoken" value="')[1].split(b'"')[0].decode()

    def sign_up(i: int) -> int:
        data = {
            "csrfmiddlewaretoken": form_token,
            "username": f"burst{i}",
            "password1": PASSWORD,
            "password2": PASSWORD,
        }
        return http(
            server,
            "POST",
            "/accounts/signup/",
            body=urllib.parse.urlencode(data).encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": f"csrftoken={cookie}",
                "Referer": f"http://{server.address}/accounts/signup/",
            },
        )[0]

    statuses = burst(sign_up)
    made = User.objects.filter(username__startswith="burst").count()
    assert through("sign-ups per address", statuses, {302}, SIGNUPS) == made
    assert made == SIGNUPS, statuses
    assert sorted(set(statuses)) == [302, 429], statuses


def test_replay_viewer_uploads_per_address(server: Proc) -> None:
    def send(i: int) -> int:
        return http(
            server,
            "POST",
            "/api/v1/replays/timeline/",
            body=b"{}",
            headers={"Content-Type": "application/json"},
        )[0]

    statuses = burst(send)
    assert through("replay viewer uploads per address", statuses, {200, 400, 415, 422},
                   VIEWER_UPLOADS) == VIEWER_UPLOADS, statuses  # fmt: skip


# --- per user ----------------------------------------------------------------------------


def test_bots_per_user(server: Proc, make_user: Any) -> None:
    user = make_user("maker")
    token = token_create(user=user, name="t").secret

    def create(i: int) -> int:
        return api(server, token, "POST", "/api/v1/bots/",
                   {"name": f"burst-bot-{i}", "kind": "hosted"})  # fmt: skip

    statuses = burst(create)
    made = Bot.objects.filter(owner=user).count()
    assert through("bots per user", statuses, {201}, BOTS) == made == BOTS, statuses


def test_api_tokens_per_user(server: Proc, make_user: Any) -> None:
    user = make_user("holder")
    token = token_create(user=user, name="t").secret
    for i in range(MAX_ACTIVE_TOKENS - 3):
        token_create(user=user, name=f"t{i}")
    statuses = burst(lambda i: api(server, token, "POST", "/api/v1/tokens/", {"name": f"b{i}"}))
    active = ApiToken.objects.filter(user=user, revoked_at__isnull=True).count()
    assert through("active API tokens per user", statuses, {201}, 2) == 2, statuses
    assert active == MAX_ACTIVE_TOKENS


def _challengers(make_user: Any, make_bot: Any) -> tuple[str, list[int]]:
    alice, bob = make_user("alice"), make_user("bob")
    bots = [make_bot(alice, "alice-bot").pk, make_bot(bob, "bob-bot").pk]
    return token_create(user=alice, name="t").secret, bots


def test_open_challenges_and_challenges_a_day(server: Proc, make_user: Any, make_bot: Any) -> None:
    token, bots = _challengers(make_user, make_bot)
    alice = User.objects.get(username="alice")

    def challenge(i: int) -> int:
        return api(server, token, "POST", "/api/v1/matches/", {"bots": bots, "rated": False})

    statuses = burst(challenge)
    mine = Match.objects.filter(requested_by=alice)
    assert through("open challenges per user", statuses, {201}, OPEN_CHALLENGES) == (
        mine.count()
    ) == OPEN_CHALLENGES, statuses  # fmt: skip
    # They end (cancelled): the open quota frees, the day's does not.
    mine.update(status=Match.Status.CANCELLED)
    statuses = burst(challenge)
    left = CHALLENGES_PER_DAY - OPEN_CHALLENGES
    assert through("challenges per user and day", statuses, {201}, left) == left, statuses
    assert mine.count() == CHALLENGES_PER_DAY


def test_open_comparisons_and_comparisons_a_day(
    server: Proc, make_user: Any, make_bot: Any
) -> None:
    from ladder.bots.services import bot_version_smoke_record, bot_version_upload

    token, (mine, theirs) = _challengers(make_user, make_bot)
    alice = User.objects.get(username="alice")
    code = b"def act(o):\n  return 1\n"
    v2 = bot_version_upload(user=alice, bot_id=mine, filename="bot.py", data=code)
    bot_version_smoke_record(version_id=v2.pk, passed=True, outcome="passed", log=b"")
    request = {"bot": mine, "old_version": 1, "new_version": 2, "opponents": [theirs], "deals": 2}

    def compare(i: int) -> int:
        return api(server, token, "POST", "/api/v1/comparisons/", request)

    statuses = burst(compare)
    made = VersionComparison.objects.filter(requested_by=alice)
    assert through("comparisons being played per user", statuses, {201}, OPEN_COMPARISONS) == (
        made.count()
    ) == OPEN_COMPARISONS, statuses  # fmt: skip
    Match.objects.filter(deal__comparison__in=made).update(status=Match.Status.CANCELLED)
    statuses = burst(compare)
    left = COMPARISONS_PER_DAY - OPEN_COMPARISONS
    assert through("comparisons per user and day", statuses, {201}, left) == left, statuses
    assert made.count() == COMPARISONS_PER_DAY


def test_stored_versions_per_bot(server: Proc, make_user: Any, make_bot: Any) -> None:
    user = make_user("uploader")
    bot = make_bot(user, "versioned")
    token = token_create(user=user, name="t").secret
    statuses = burst(
        lambda i: upload(server, token, bot.pk, f"def act(o):\n  return {i}\n".encode())
    )
    stored = BotVersion.objects.filter(bot=bot).exclude(archive="").count()
    # The first version is current and every new one waits for its smoke match: none of
    # them can be pruned, so only VERSIONS - 1 uploads fit.
    assert through("stored versions per bot", statuses, {201}, VERSIONS - 1) == VERSIONS - 1, (
        statuses
    )
    assert stored == VERSIONS


def test_stored_bytes_per_user(server: Proc, make_user: Any, make_bot: Any) -> None:
    user = make_user("hoarder")
    bots = [make_bot(user, f"hoard-{i}") for i in range(3)]
    token = token_create(user=user, name="t").secret
    used = sum(v.archive_size for v in BotVersion.objects.filter(bot__owner=user))
    size = 1000
    fits = (BYTES - used) // size
    assert 0 < fits < N

    def send(i: int) -> int:
        data = (f"# {i}\n" + "x" * size)[: size - 25] + "\ndef act(o):\n  return 0\n"
        return upload(server, token, bots[i % len(bots)].pk, data.encode())

    statuses = burst(send)
    stored = sum(
        v.archive_size for v in BotVersion.objects.filter(bot__owner=user).exclude(archive="")
    )
    assert through("stored bytes of uploads per user", statuses, {201}, fits) <= fits, statuses
    assert stored <= BYTES


def test_game_exports_per_user(server: Proc, make_user: Any) -> None:
    token = token_create(user=make_user("exporter"), name="t").secret
    statuses = burst(lambda i: api(server, token, "GET", "/api/v1/exports/games/"))
    assert through("game exports per user", statuses, {200}, EXPORTS) == EXPORTS, statuses


def test_zz_what_got_through(capsys: pytest.CaptureFixture[str]) -> None:
    """The table of the report (run with -s): each limit, what got through a burst."""
    with capsys.disabled():
        print(f"\n{'limit':45} {'through':>7} {'limit':>5}  ({N} at once)")
        for name, (n, limit) in THROUGH.items():
            print(f"{name:45} {n:7} {limit:5}")
    assert all(n <= limit for n, limit in THROUGH.values()), THROUGH
