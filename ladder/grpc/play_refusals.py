"""Tell a connected bot's owner that the ladder refused its stream.

A bot that is refused (suspended, retired, past its stream limits) retries on
its own and its author may never look at its output: the refusal is also told
through ``ladder.notifications`` (at most once per reason and
``LADDER_NOTIFY_REFUSED_QUIET_S``). The ladder's own trouble (presence records
unreachable: UNAVAILABLE) is not the bot's and is not told. Telling never
changes the answer: a failure to record the message is logged and the refusal
goes out as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import grpc
from django.db import DatabaseError

from ladder.bots.models import Bot
from ladder.grpc.auth import GrpcError
from ladder.notifications import events

log = logging.getLogger("ladder.grpc.play")

TOLD = (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.RESOURCE_EXHAUSTED)


@contextmanager
def refusals_told(bot: Bot, user: Any) -> Iterator[None]:
    """Around the admission checks of ``bot``: a refusal in ``TOLD`` is told to its owner."""
    try:
        yield
    except GrpcError as exc:
        if exc.code in TOLD and bot.kind == Bot.Kind.CONNECTED:
            try:
                events.connected_refused(
                    owner=user, bot_id=bot.pk, bot_name=bot.name, code=exc.code.name,
                    why=exc.message,
                )  # fmt: skip
            except DatabaseError:
                log.exception("refusal of bot %s not told to its owner", bot.pk)
        raise
