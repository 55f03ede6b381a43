"""The drills' hands on the ladder: set up, create matches, and check what is stored.

Run by the cluster tests in the host namespace with DATABASE_URL and the broker
on unix sockets (nothing here sends to the namespaces' addresses):

    python -m tests.cluster.drive setup --bots ADDR,ADDR,... --connected N --hosted N
        -> {"bots": [...], "connected": [...], "hosted": [...], "token": ...}
    python -m tests.cluster.drive hosted-ready                 -> {"valid": n, "pending": n}
    python -m tests.cluster.drive create --count N [--countdown S] [--seed K] [--pool P]
        -> [ids]
    python -m tests.cluster.drive check --ids 1,2,3            -> the invariants, as JSON
    python -m tests.cluster.drive lift                         -> [names lifted]

``--countdown`` sends each match's message with a countdown, as a retry does,
so a worker holds it reserved but unclaimed (the kill drill of reserved matches).
``--pool`` says whose matches: ``remote`` (the remote house bots, the default),
``connected`` (the connected ones), ``hosted`` (the uploaded ones, run in a sandbox on
the worker), ``mixed`` (one remote, one connected) or ``any`` (two of all).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import Counter
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")


POOLS = ("remote", "connected", "hosted", "mixed", "any")
# What the hosted house bots run: the first bot of docs/writing-a-bot.md, uploaded as an
# author would (the SDK only: the sandbox has no repository).
HOSTED_SOURCE = "examples/first_bot.py"


def setup(bots: list[str], connected: int, hosted: int = 0) -> dict[str, Any]:
    from pathlib import Path

    from django.core.management import call_command

    from ladder.accounts.models import User
    from ladder.accounts.services import token_create
    from ladder.bots.services import bot_create, bot_version_upload

    call_command("migrate", verbosity=0)
    owner = User.objects.create_user(username="drills", password="drills-pw-12345678")
    ids = [
        bot_create(owner=owner, name=f"house{i}", kind="remote", endpoint=addr).pk
        for i, addr in enumerate(bots)
    ]
    linked = [
        bot_create(owner=owner, name=f"linked{i}", kind="connected").pk for i in range(connected)
    ]
    source = Path(HOSTED_SOURCE).read_bytes()
    kept = []
    for i in range(hosted):  # each version plays its smoke match on a worker (hosted_ready)
        bot = bot_create(owner=owner, name=f"kept{i}", kind="hosted")
        bot_version_upload(user=owner, bot_id=bot.pk, filename="first_bot.py", data=source)
        kept.append(bot.pk)
    return {
        "bots": ids,
        "connected": linked,
        "hosted": kept,
        "token": token_create(user=owner).secret,
    }


def hosted_ready() -> dict[str, int]:
    """How the hosted house bots' versions stand: valid once their smoke match passed."""
    from ladder.bots.models import Bot, BotVersion

    versions = BotVersion.objects.filter(bot__kind=Bot.Kind.HOSTED)
    return {
        "valid": versions.filter(status=BotVersion.Status.VALID).count(),
        "pending": versions.filter(status=BotVersion.Status.PENDING).count(),
        "invalid": versions.filter(status=BotVersion.Status.INVALID).count(),
    }


def create(count: int, countdown: float, seed: int, pool: str = "remote") -> list[int]:
    from django.conf import settings

    from ladder.bots.models import Bot
    from ladder.common.exceptions import ApplicationError
    from ladder.matches import creation, queue

    if countdown:
        from ladder.common.tasks import producer

        def send_later(*, match_id: int, priority: int = 0) -> None:
            producer().send_task(
                settings.LADDER_TASK_PLAY_MATCH, args=[match_id], countdown=countdown
            )

        queue.match_enqueue = send_later
    rng = random.Random(seed)
    kinds = dict(Bot.objects.order_by("pk").values_list("pk", "kind"))
    remote = [pk for pk, kind in kinds.items() if kind == Bot.Kind.REMOTE]
    linked = [pk for pk, kind in kinds.items() if kind == Bot.Kind.CONNECTED]
    kept = [pk for pk, kind in kinds.items() if kind == Bot.Kind.HOSTED]
    pools = {"remote": remote, "connected": linked, "hosted": kept}

    def pair() -> list[int]:
        if pool == "mixed":
            return [rng.choice(remote), rng.choice(linked)][:: rng.choice((1, -1))]
        return rng.sample(pools.get(pool, remote + linked + kept), 2)

    # A pair the ladder refuses (a connected bot with no stream just now, a bot suspended
    # for the faults the nemesis caused) is skipped, so one such bot never stops the feed;
    # every match made is returned, so none is left out of the run's checks.
    made: list[int] = []
    refused: Counter[str] = Counter()
    for _ in range(count * 10):
        if len(made) == count:
            break
        try:
            made.append(creation.match_create(bot_ids=pair(), seed=rng.randrange(1 << 30)).pk)
        except ApplicationError as exc:
            refused[exc.message[:80]] += 1
    if refused:
        print(f"drive create: refused {dict(refused)}", file=sys.stderr)
    return made


def lift() -> list[str]:
    """The house bots' owner lifts every automatic suspension, as an owner does once the
    cause is fixed (the nemesis restarts what it killed): a long run keeps all its bots."""
    from ladder.accounts.models import User
    from ladder.bots.models import Bot
    from ladder.bots.services import bot_unsuspend

    owner = User.objects.get(username="drills")
    suspended = Bot.objects.filter(owner=owner, suspension=Bot.Suspension.AUTO)
    return [bot_unsuspend(user=owner, bot_id=bot.pk).name for bot in suspended]


def check(ids: list[int]) -> dict[str, Any]:
    """What the drills assert, from the database: one dict, every number counted."""
    from django.conf import settings
    from django.core.management import call_command

    from ladder.bots.models import Bot
    from ladder.matches.models import Match, MatchResult, MatchSeat
    from ladder.ratings.models import BotRating

    matches = Match.objects.filter(pk__in=ids)
    status = Counter(matches.values_list("status", flat=True))
    finished = matches.filter(status=Match.Status.FINISHED)
    errored = list(matches.filter(status=Match.Status.ERRORED).values_list("pk", "error"))
    results = Counter(
        MatchResult.objects.filter(match_id__in=ids).values_list("match_id", flat=True)
    )
    seats = MatchSeat.objects.filter(match_id__in=ids)
    # The house bots never fault: any fault or forfeit in a drill is the infrastructure's.
    charged = sorted(
        set(
            seats.filter(match__status=Match.Status.FINISHED)
            .exclude(faults=0, forfeit_reason="")
            .values_list("match_id", flat=True)
        )
    )
    entries = BotRating.objects.filter(ladder=settings.LADDER_DEFAULT_LADDER)
    all_seats = MatchSeat.objects.filter(
        match__status=Match.Status.FINISHED, rating_after__isnull=False
    )
    games = dict(entries.values_list("bot_id", "games"))
    counted_twice = [bot for bot, n in games.items() if all_seats.filter(bot_id=bot).count() != n]
    n_bots = Bot.objects.count()
    total = sum(entries.values_list("rating", flat=True))
    try:
        call_command("rerate", "--check", verbosity=0)
        rerate = "ok"
    except SystemExit as exc:
        rerate = f"exit {exc.code}"
    everywhere = Counter(Match.objects.values_list("status", flat=True))
    return {
        "requested": len(ids),
        "finished": status.get(Match.Status.FINISHED, 0),
        "errored": status.get(Match.Status.ERRORED, 0),
        # played more than once: released (or requeued) at least once before it settled
        "released": matches.filter(attempts__gt=1).count(),
        "finished_with_connected": finished.filter(seats__bot__kind=Bot.Kind.CONNECTED)
        .distinct()
        .count(),
        "finished_with_hosted": finished.filter(seats__bot__kind=Bot.Kind.HOSTED)
        .distinct()
        .count(),
        "errors": errored,
        "unsettled": len(ids) - finished.count() - len(errored),
        "missing": len(ids) - matches.count(),
        "results": sum(results.values()),
        "doubled": sorted(m for m, n in results.items() if n > 1),
        "finished_without_result": finished.exclude(pk__in=list(results)).count(),
        "rated_by_infrastructure": charged,
        "counted_twice": counted_twice,
        "rating_sum": total,
        "rating_sum_expected": len(games) * settings.LADDER_ELO_START,
        "bots": n_bots,
        "rerate": rerate,
        "stuck": everywhere.get(Match.Status.RUNNING, 0) + everywhere.get(Match.Status.QUEUED, 0),
    }


def charges(ids: list[int]) -> list[dict[str, Any]]:
    """The finished matches of ``ids`` that charged a seat (a fault or a forfeit): their
    window (wall clock) and, per charged seat, its bot's name and kind, faults, forfeit
    reason and the fault kinds its replay records (the nemesis's judge reads them)."""
    from ladder.bots.models import Bot
    from ladder.matches.models import Match, MatchSeat
    from workers.runner import replay as replay_io

    out = []
    charged = (
        MatchSeat.objects.filter(match_id__in=ids, match__status=Match.Status.FINISHED)
        .exclude(faults=0, forfeit_reason="")
        .select_related("match", "bot")
    )
    by_match: dict[int, list[Any]] = {}
    for seat in charged:
        by_match.setdefault(seat.match_id, []).append(seat)
    for match_id, seats in sorted(by_match.items()):
        match = seats[0].match
        kinds: dict[int, set[str]] = {}
        try:
            doc = replay_io.read(match.replay.path)
            for f in doc.get("faults", []):
                kinds.setdefault(int(f["seat"]), set()).add(str(f["kind"]))
        except Exception as exc:
            kinds[-1] = {f"replay unreadable: {exc}"}
        out.append(
            {
                "id": match_id,
                "connected_seat": MatchSeat.objects.filter(
                    match_id=match_id, bot__kind=Bot.Kind.CONNECTED
                ).exists(),
                "started_at": match.started_at.timestamp() if match.started_at else 0.0,
                "finished_at": match.finished_at.timestamp() if match.finished_at else 0.0,
                "seats": [
                    {
                        "seat": s.seat,
                        "bot": s.bot.name,
                        "kind": s.bot.kind,
                        "faults": s.faults,
                        "forfeit": s.forfeit_reason,
                        "kinds": sorted(kinds.get(s.seat, ())),
                        "moved": s.rating_before != s.rating_after,
                    }
                    for s in seats
                ],
            }
        )
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m tests.cluster.drive")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("setup")
    s.add_argument("--bots", required=True)
    s.add_argument("--connected", type=int, default=0)
    s.add_argument("--hosted", type=int, default=0)
    c = sub.add_parser("create")
    c.add_argument("--count", type=int, required=True)
    c.add_argument("--countdown", type=float, default=0.0)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--pool", choices=POOLS, default="remote")
    k = sub.add_parser("check")
    k.add_argument("--ids", required=True)
    g = sub.add_parser("charges")
    g.add_argument("--ids", required=True)
    sub.add_parser("lift")
    sub.add_parser("hosted-ready")
    args = p.parse_args(argv)

    import django

    django.setup()
    if args.command == "setup":
        out: Any = setup(args.bots.split(","), args.connected, args.hosted)
    elif args.command == "hosted-ready":
        out = hosted_ready()
    elif args.command == "create":
        out = create(args.count, args.countdown, args.seed, args.pool)
    elif args.command == "lift":
        out = lift()
    elif args.command == "charges":
        out = charges([int(i) for i in args.ids.split(",") if i])
    else:
        out = check([int(i) for i in args.ids.split(",") if i])
    print("\n" + json.dumps(out))  # the last line: what the drills read


if __name__ == "__main__":
    main()
