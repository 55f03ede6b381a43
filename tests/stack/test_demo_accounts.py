"""`make run`'s demo accounts and fallback matchmaker, on the test database.

The whole `make run` is tests/stack/test_make_run.py; here the parts that need many
cases: passwords and tokens kept across runs (and replaced when they stopped
working), the demo user made staff, and tables never seating two bots of one owner.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from deploy.ladder import DEMO_USER, RIVAL_USER, demo_accounts, queue_demo_match
from ladder.accounts.services import token_authenticate, token_revoke
from ladder.matches.models import Match
from tests.ladder.conftest import make_bot, make_user  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db


def test_passwords_and_tokens_stay_the_same_across_runs(tmp_path: Path) -> None:
    with override_settings(VAR_DIR=str(tmp_path)):
        first = demo_accounts()
        again = demo_accounts()
        assert {n: (a.password, a.token) for n, a in first.items()} == {
            n: (a.password, a.token) for n, a in again.items()
        }
        demo = again[DEMO_USER].user
        assert demo.is_staff and not again[RIVAL_USER].user.is_staff
        found = token_authenticate(secret=again[DEMO_USER].token)
        assert found is not None and found.user_id == demo.pk
        # A token revoked on the site, or a password changed there, is replaced next run.
        token_revoke(user=demo, token_id=found.pk)
        demo.set_password("changed-on-the-site-1")
        demo.save()
        third = demo_accounts()[DEMO_USER]
        assert third.token != again[DEMO_USER].token and token_authenticate(secret=third.token)
        assert third.password != again[DEMO_USER].password
        assert third.user.check_password(third.password)
        assert (tmp_path / "demo-accounts.json").stat().st_mode & 0o077 == 0


def test_the_fallback_never_seats_two_bots_of_one_owner(
    make_user: Any,  # noqa: F811  (the fixture imported above)
    make_bot: Any,  # noqa: F811
) -> None:
    owners = [make_user(f"owner{i}") for i in range(3)]
    bots = [(make_bot(o, f"bot-{o.username}-{j}").pk, o.pk) for o in owners for j in range(2)]
    rng = random.Random(5)
    ids = [queue_demo_match(bots, rng) for _ in range(30)]
    sizes = set()
    for match in Match.objects.filter(pk__in=ids).prefetch_related("seats__bot"):
        seat_owners = [s.bot.owner_id for s in match.seats.all()]
        assert len(seat_owners) == len(set(seat_owners)), seat_owners
        sizes.add(len(seat_owners))
    assert sizes == {2, 3}
    assert queue_demo_match([(b, o) for b, o in bots if o == owners[0].pk], rng) is None
