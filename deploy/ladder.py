"""The ladder's side of ``make run`` (Django): the database, the demo accounts and their bots,
the fallback matchmaker, matches shown as they end, the leaderboard, and matches whose
worker had to be killed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import secrets
import socket
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deploy.processes import HOST, POLL_S, done, process_exists, say, step

DEMO_USER = "demo"  # staff: it may run tournaments (docs/tournaments.md) and use /admin/
RIVAL_USER = "rival"  # a second owner, so the example bots can meet at all (never two
# bots of one owner at a table: the matchmaker's rule, and the fallback's below)
# The example bots: (name when hosted, name when served here as a remote bot, module, owner).
DEMO_BOTS = (
    ("random", "local-random", "examples.random_bot", DEMO_USER),
    ("heuristic", "local-heuristic", "examples.heuristic_bot", RIVAL_USER),
    ("starter", "local-starter", "examples.starter_bot", DEMO_USER),
)
# Their passwords and tokens, kept so every run prints the same ones (mode 0600, under var/).
ACCOUNTS_FILE = "demo-accounts.json"
VALIDATE_TIMEOUT_S = 180.0


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")
    import django

    django.setup()


def migrate() -> None:
    """The schema, and with DJANGO_DEBUG=0 the static files WhiteNoise serves (hashed names)."""
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    if not settings.DEBUG:
        call_command("collectstatic", interactive=False, verbosity=0)


def sandbox_refusal() -> str:
    """Why hosted bots cannot run here ("" when they can), as the workers will see it."""
    from workers.hosted import hosted_refusal

    return hosted_refusal()


@dataclass(frozen=True)
class DemoAccount:
    user: Any
    password: str
    token: str


def demo_accounts() -> dict[str, DemoAccount]:
    """The demo accounts (made once), with the password and API token of the last run.

    Both are kept in ``var/demo-accounts.json`` and reused while they still work (a
    password changed on the site, or a revoked token, gets a new one), so a browser's
    saved sign-in and a script's token survive restarts.
    """
    from django.conf import settings

    from ladder.accounts.models import User
    from ladder.accounts.services import token_authenticate, token_create

    path = Path(settings.VAR_DIR) / ACCOUNTS_FILE
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        saved = {}
    accounts = {}
    for name in (DEMO_USER, RIVAL_USER):
        user = User.objects.filter(username=name).first()
        if user is None:
            user = User.objects.create_user(username=name, email=f"{name}@example.org")
        if name == DEMO_USER and not user.is_staff:
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        kept = saved.get(name) if isinstance(saved.get(name), dict) else {}
        password = str(kept.get("password") or "")
        if not password or not user.check_password(password):
            password = secrets.token_urlsafe(9)
            user.set_password(password)
            user.save(update_fields=["password"])
        token = str(kept.get("token") or "")
        found = token_authenticate(secret=token) if token else None
        if found is None or found.user_id != user.pk:
            token = token_create(user=user, name="make run").secret
        accounts[name] = DemoAccount(user, password, token)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({n: {"password": a.password, "token": a.token} for n, a in accounts.items()}, f)
    return accounts


def _owned_by(bot: Any, user: Any, users: dict[str, DemoAccount], name: str) -> bool:
    """Whether ``bot`` is (now) ``user``'s: an example of another demo account moves over.

    Databases of earlier runs have every example under the demo user; this is
    make run's own bookkeeping, not a user's change, so it moves the bot directly.
    """
    from ladder.bots.models import Bot

    if bot.owner_id == user.pk:
        return True
    if bot.owner_id in {a.user.pk for a in users.values()}:
        Bot.objects.filter(pk=bot.pk).update(owner=user)
        step(f"{name} now belongs to {user.username}")
        return True
    return False


def register_hosted(users: dict[str, DemoAccount]) -> list[int]:
    """The example bots as hosted bots of their demo accounts; a new version when one changed."""
    from examples.hosted_bundle import build
    from ladder.bots.models import Bot
    from ladder.bots.services import bot_create, bot_version_upload

    ids = []
    for name, _, _, owner in DEMO_BOTS:
        user = users[owner].user
        bot = Bot.objects.filter(name__iexact=name).first()
        if bot is None:
            bot = bot_create(owner=user, name=name, kind=Bot.Kind.HOSTED, description="example")
        elif bot.kind != Bot.Kind.HOSTED or not _owned_by(bot, user, users, name):
            say(f"  !!  a bot named {name} exists and is not the demo's hosted bot: left out")
            continue
        filename, data = build(name)
        digest = hashlib.sha256(data).hexdigest()
        if not bot.versions.filter(archive_sha256=digest).exclude(status="invalid").exists():
            bot_version_upload(user=user, bot_id=bot.pk, filename=filename, data=data)
            step(f"uploaded {name} ({len(data)} bytes): its smoke match makes it valid")
        ids.append(bot.pk)
    return ids


def wait_valid(bot_ids: list[int], check_stack: Callable[[], None]) -> list[int]:
    """Wait until each bot has a current (valid) version; drop those whose smoke match failed."""
    from ladder.bots.models import Bot, BotVersion

    deadline = time.monotonic() + VALIDATE_TIMEOUT_S
    while True:
        bots = list(Bot.objects.filter(pk__in=bot_ids))
        waiting = [b for b in bots if b.current_version_id is None]
        for bot in waiting:
            newest = bot.versions.order_by("-number").first()
            if newest is not None and newest.status == BotVersion.Status.INVALID:
                say(f"  !!  {bot.name}: smoke match failed: {newest.smoke_outcome}")
                bot_ids = [i for i in bot_ids if i != bot.pk]
        if not [b for b in waiting if b.pk in bot_ids]:
            return bot_ids
        if time.monotonic() > deadline:
            names = ", ".join(b.name for b in waiting)
            raise RuntimeError(f"hosted bots {names} not valid after {VALIDATE_TIMEOUT_S:g} s")
        check_stack()
        time.sleep(POLL_S)


def register_remote(users: dict[str, DemoAccount], ports: Sequence[int]) -> list[int]:
    """The example bots as remote bots of their demo accounts at the loopback ports here."""
    from django.conf import settings

    from ladder.bots.models import Bot
    from ladder.bots.services import bot_create, bot_set_endpoint

    if not settings.LADDER_DEV_MODE:
        raise RuntimeError(
            "the example bots would be remote bots on loopback, which only development mode "
            "allows (LADDER_DEV_MODE=1, the default with DJANGO_DEBUG=1); or install bubblewrap"
        )
    ids = []
    for (_, name, _, owner), port in zip(DEMO_BOTS, ports, strict=True):
        user = users[owner].user
        endpoint = f"{HOST}:{port}"
        bot = Bot.objects.filter(name__iexact=name).first()
        if bot is None:
            bot = bot_create(owner=user, name=name, kind=Bot.Kind.REMOTE, endpoint=endpoint)
        elif bot.kind != Bot.Kind.REMOTE or not _owned_by(bot, user, users, name):
            say(f"  !!  a bot named {name} exists and is not the demo's remote bot: left out")
            continue
        elif bot.current_version is None or bot.current_version.endpoint != endpoint:
            bot_set_endpoint(user=user, bot_id=bot.pk, endpoint=endpoint)
        ids.append(bot.pk)
    return ids


def requeue_leftovers() -> None:
    """Matches left queued or lost by an earlier run are sent to the workers again now."""
    from django.conf import settings

    from ladder.matches.retries import match_requeue_stale

    report = match_requeue_stale(queued_grace_s=0, max_attempts=settings.LADDER_MATCH_MAX_ATTEMPTS)
    if report.requeued or report.resent:
        done(f"sent again: {len(report.requeued) + len(report.resent)} match(es) of earlier runs")


def release_orphaned_matches() -> list[int]:
    """Give back to the queue the running matches of this machine's workers that are gone.

    After a worker was killed (a second Ctrl-C, or it did not stop in time) its
    matches would wait for their lease to expire and the janitor; here they are
    released at once (fenced by the claim, as the worker itself would) and sent again.
    """
    from ladder.matches.claims import match_release
    from ladder.matches.models import Match
    from ladder.matches.queue import match_enqueue

    host = socket.gethostname()
    released = []
    running = Match.objects.filter(status=Match.Status.RUNNING, claimed_by__startswith=f"{host}:")
    for match in running:
        pid = match.claimed_by.rsplit(":", 1)[1]
        if pid.isdigit() and process_exists(int(pid)):
            continue
        if match_release(
            match_id=match.pk,
            worker=match.claimed_by,
            attempt=match.attempts,
            error="its worker was stopped by make run",
        ):
            match_enqueue(match_id=match.pk)
            released.append(match.pk)
    return released


def matchmaking_scheduled() -> bool:
    """Is a matchmaking task in beat's schedule (then beat keeps the ladder playing)?"""
    from django.conf import settings

    schedule: dict[str, dict[str, Any]] = settings.CELERY_BEAT_SCHEDULE
    return any("matchmak" in str(entry.get("task")) for entry in schedule.values())


def demo_playable(user_ids: Sequence[int], remote_examples: bool) -> list[tuple[int, int]]:
    """(bot, owner) of the demo accounts' bots that can be seated now (examples and uploads).

    Examples of the other kind, registered by an earlier run on this database (the
    sandbox was installed or removed since), are left out: they cannot play now.
    """
    from ladder.bots.models import Bot

    other = [hosted if remote_examples else remote for hosted, remote, _, _ in DEMO_BOTS]
    return list(
        Bot.objects.filter(
            owner_id__in=user_ids,
            is_active=True,
            retired_at__isnull=True,
            current_version__isnull=False,
        )
        .exclude(name__in=other)
        .values_list("pk", "owner_id")
    )


def in_flight(bot_ids: list[int]) -> int:
    """Queued or running matches that seat any of ``bot_ids``."""
    from ladder.matches.models import Match

    return (
        Match.objects.filter(
            status__in=[Match.Status.QUEUED, Match.Status.RUNNING], seats__bot_id__in=bot_ids
        )
        .distinct()
        .count()
    )


def queue_demo_match(bots: Sequence[tuple[int, int]], rng: random.Random) -> int | None:
    """FALLBACK MATCHMAKER of make run: a random table of the demo accounts' bots.

    Keeps the examples playing whether or not beat's matchmaker is scheduled, and
    keeps its rule: never two bots of one owner at a table (collusion), so a table
    has one bot of each of 2 to 4 owners. None when fewer than two owners can play.
    """
    from ladder.matches.creation import match_create

    by_owner: dict[int, list[int]] = defaultdict(list)
    for bot_id, owner_id in bots:
        by_owner[owner_id].append(bot_id)
    if len(by_owner) < 2:
        return None
    owners = rng.sample(sorted(by_owner), rng.randint(2, min(4, len(by_owner))))
    return match_create(bot_ids=[rng.choice(by_owner[o]) for o in owners]).pk


def finished_since(after_id: int, shown: set[int]) -> list[tuple[int, str]]:
    """(id, one line) for each match after ``after_id`` that ended and is not in ``shown``."""
    from ladder.common.elo import points
    from ladder.matches.models import Match

    done_statuses = [Match.Status.FINISHED, Match.Status.ERRORED, Match.Status.CANCELLED]
    lines = []
    for match in (
        Match.objects.filter(pk__gt=after_id, status__in=done_statuses)
        .exclude(pk__in=shown)
        .prefetch_related("seats__bot")
        .order_by("pk")
    ):
        if match.status != Match.Status.FINISHED:
            lines.append((match.pk, f"match {match.pk} {match.status}: {match.error[:200]}"))
            continue
        seats = sorted(match.seats.all(), key=lambda s: (s.rank or 9, s.seat))
        who = ", ".join(
            f"{s.rank}. {s.bot.name}"
            + ("" if s.rating_delta is None else f" ({points(s.rating_delta):+.1f})")
            for s in seats
        )
        lines.append((match.pk, f"match {match.pk} finished: {who}"))
    return lines


def last_match_id() -> int:
    from ladder.matches.models import Match

    return Match.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def leaderboard_table() -> str:
    from django.conf import settings

    from ladder.common.elo import points
    from ladder.ratings.selectors import leaderboard_list

    key = settings.LADDER_DEFAULT_LADDER
    rows = [f"Leaderboard ({key})", "", "  #  bot                   kind     rating  games  wins"]
    for n, bot in enumerate(leaderboard_list(ladder=key)[:20], start=1):
        rows.append(
            f"{n:>3}  {bot.name:<20}  {bot.kind:<7} {points(bot.rating):>7.1f}  "  # type: ignore[attr-defined]
            f"{bot.games:>5}  {bot.wins:>4}"
        )
    return "\n".join(rows)


def running_count() -> int:
    from ladder.matches.models import Match

    return Match.objects.filter(status=Match.Status.RUNNING).count()
