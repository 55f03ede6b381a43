"""Following a competition: a signed-in user who has not entered (yet) is told its news.

Its phases and its result reach the owners of its entries; a follower is told the
same messages (``events``: one per user and event, whoever is both an owner and a
follower), so "entry is open" reaches the people who want to enter, who by then
have no entry to be told through. Only public competitions are followed: a private
tournament tells its own entrants. Following a finished one would tell nothing.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from ladder.accounts.models import User
from ladder.common.exceptions import ApplicationError, Conflict, NotFound
from ladder.competitions.models import Competition, CompetitionFollower


def _followable(competition_id: int) -> Competition:
    competition = Competition.objects.filter(pk=competition_id).first()
    if competition is None or competition.private:
        raise NotFound("no such competition")
    return competition


def competition_follow(*, user: User, competition_id: int) -> bool:
    """``user`` follows the competition: True when they did not before (idempotent)."""
    if not user.is_authenticated:
        raise ApplicationError("sign in to follow a competition")
    competition = _followable(competition_id)
    if competition.phase == Competition.Phase.FINISHED:
        raise Conflict("the competition is finished: there is nothing more to tell")
    try:
        with transaction.atomic():
            _, created = CompetitionFollower.objects.get_or_create(
                competition=competition, user=user
            )
    except IntegrityError:  # a concurrent follow by the same user made the row first
        return False
    return created


def competition_unfollow(*, user: User, competition_id: int) -> bool:
    """``user`` stops following: True when they did follow (idempotent)."""
    _followable(competition_id)
    deleted, _ = CompetitionFollower.objects.filter(
        competition_id=competition_id, user_id=user.pk
    ).delete()
    return deleted > 0


def competition_followed(*, user: User, competition_id: int) -> bool:
    """Whether ``user`` follows the competition (False when signed out)."""
    if not user.is_authenticated:
        return False
    return CompetitionFollower.objects.filter(
        competition_id=competition_id, user_id=user.pk
    ).exists()
