"""The ladder side of ``make compose-check``, run inside the stack's web container.

    python -m deploy.compose_fixture setup ENDPOINT   # two owners, a hosted bot (the random
                                                      # house bot's upload) and a remote bot
                                                      # at ENDPOINT; prints their ids (JSON)
    python -m deploy.compose_fixture status           # the hosted version, matches by status
    python -m deploy.compose_fixture queue N          # N matches between the two bots
    python -m deploy.compose_fixture running T        # the first match seen running (T s)
    python -m deploy.compose_fixture verify           # exactly once: one result per match

``deploy/compose_check.py`` calls it with ``docker compose exec``; every command prints
one JSON document. It uses the ladder's own services (the same writes the REST API makes),
so the check needs no account or token on the host.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Any

HOSTED, REMOTE = "check-hosted", "check-remote"
OWNERS = ("check-a", "check-b")  # never two bots of one owner at a table


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")
    import django

    django.setup()


def setup(endpoint: str) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    from examples.hosted_bundle import build
    from ladder.bots.models import Bot
    from ladder.bots.services import bot_create, bot_version_upload

    users = [get_user_model().objects.get_or_create(username=name)[0] for name in OWNERS]
    hosted = Bot.objects.filter(name=HOSTED).first()
    if hosted is None:
        hosted = bot_create(owner=users[0], name=HOSTED, kind=Bot.Kind.HOSTED, description="check")
        filename, data = build("random")
        bot_version_upload(user=users[0], bot_id=hosted.pk, filename=filename, data=data)
    remote = Bot.objects.filter(name=REMOTE).first()
    if remote is None:
        remote = bot_create(owner=users[1], name=REMOTE, kind=Bot.Kind.REMOTE, endpoint=endpoint)
    return {"hosted": hosted.pk, "remote": remote.pk}


def status() -> dict[str, Any]:
    from ladder.bots.models import Bot
    from ladder.matches.models import Match

    hosted = Bot.objects.get(name=HOSTED)
    version = hosted.versions.order_by("-number").first()
    matches = Match.objects.filter(seats__bot=hosted).distinct()
    return {
        "hosted_version": {
            "number": version.number if version else None,
            "status": version.status if version else None,
            "outcome": getattr(version, "smoke_outcome", "") if version else "",
        },
        "matches": dict(Counter(matches.values_list("status", flat=True))),
        "running": [
            {"id": m.pk, "claimed_by": m.claimed_by}
            for m in matches.filter(status=Match.Status.RUNNING)
        ],
    }


def queue(n: int) -> dict[str, Any]:
    from ladder.bots.models import Bot
    from ladder.matches.creation import match_create

    hosted, remote = Bot.objects.get(name=HOSTED), Bot.objects.get(name=REMOTE)
    ids = [
        match_create(bot_ids=[hosted.pk, remote.pk] if i % 2 else [remote.pk, hosted.pk]).pk
        for i in range(n)
    ]
    return {"queued": ids}


def running(timeout_s: float) -> dict[str, Any]:
    """The first match of the check's bots seen RUNNING (polled here, every 50 ms: a match
    of two bots lasts seconds, too short for a poll from the host), or none."""
    import time

    from ladder.bots.models import Bot
    from ladder.matches.models import Match

    hosted = Bot.objects.get(name=HOSTED)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        match = (
            Match.objects.filter(seats__bot=hosted, status=Match.Status.RUNNING)
            .exclude(claimed_by="")
            .first()
        )
        if match is not None:
            return {"id": match.pk, "claimed_by": match.claimed_by}
        time.sleep(0.05)
    return {}


def verify() -> dict[str, Any]:
    """Every finished match of the check's bots has exactly one result: one rating-ledger
    row per seat, one seat count per match; none is recorded twice after the kill."""
    from ladder.bots.models import Bot
    from ladder.matches.models import Match
    from ladder.ratings.models import RatingChange

    hosted = Bot.objects.get(name=HOSTED)
    matches = Match.objects.filter(seats__bot=hosted).distinct()
    finished = set(matches.filter(status=Match.Status.FINISHED).values_list("pk", flat=True))
    rows = Counter(
        RatingChange.objects.filter(
            match_id__in=list(matches.values_list("pk", flat=True))
        ).values_list("match_id", "seat")
    )
    twice = sorted({m for (m, _), n in rows.items() if n > 1})
    recorded = {m for m, _ in rows}
    return {
        "finished": len(finished),
        "statuses": dict(Counter(matches.values_list("status", flat=True))),
        "recorded_twice": twice,
        "finished_without_result": sorted(finished - recorded),
        "result_without_finish": sorted(recorded - finished),
        "attempts_over_1": sorted(matches.filter(attempts__gt=1).values_list("pk", flat=True)),
        "exactly_once": not twice and recorded == finished,
    }


def main(argv: list[str]) -> int:
    setup_django()
    command, args = argv[0], argv[1:]
    if command == "setup":
        out = setup(args[0])
    elif command == "status":
        out = status()
    elif command == "queue":
        out = queue(int(args[0]))
    elif command == "running":
        out = running(float(args[0]))
    elif command == "verify":
        out = verify()
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
