"""The numbers an operator watches, read from the database: the ``/now/`` page and the
web's ``/metrics`` both show these, so a person without Grafana sees what the alerts see.

Every read goes through the (status, id) index and is bounded by the last
hour's matches, not by the ladder's history: the newest match that finished
before the window is found by walking that index down, and only matches above
it are counted. A match created long before the window and finished inside it
is left out of the hour's figures; the current queue is counted exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, Min
from django.db.models.functions import Coalesce
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from ladder.common.tasks import queue_depth
from ladder.matches.models import Match

WINDOW = timedelta(hours=1)


@dataclass(frozen=True)
class Operations:
    queued: int
    running: int
    oldest_queued_age_s: float  # 0 when nothing is queued
    finished_last_hour: int
    errored_last_hour: int
    workers_seen: int  # worker processes that claimed a match in the last hour

    @property
    def matches_per_min(self) -> float:
        return self.finished_last_hour / (WINDOW.total_seconds() / 60)

    @property
    def error_share(self) -> float:
        """Errored among the matches that ended in the last hour (0 when none did)."""
        ended = self.finished_last_hour + self.errored_last_hour
        return self.errored_last_hour / ended if ended else 0.0


def operations_summary(*, ladder: str = "", now: datetime | None = None) -> Operations:
    """The queue as it stands and the last hour's matches, on one ladder or all (``""``)."""
    now = now or timezone.now()
    since = now - WINDOW
    matches = Match.objects.all()
    if ladder:
        matches = matches.filter(ladder=ladder)
    queue = matches.filter(status=Match.Status.QUEUED).aggregate(
        n=Count("id"), oldest=Min(Coalesce("enqueued_at", "created_at"))
    )
    floor = (
        matches.filter(status=Match.Status.FINISHED, finished_at__lt=since)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    ) or 0
    recent = matches.filter(id__gt=floor)
    ended = dict(
        recent.filter(
            status__in=[Match.Status.FINISHED, Match.Status.ERRORED], finished_at__gte=since
        )
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    claimants = (
        recent.filter(started_at__gte=since)
        .exclude(claimed_by="")
        .values_list("claimed_by", flat=True)
        .distinct()
    )
    oldest = queue["oldest"]
    return Operations(
        queued=queue["n"],
        running=matches.filter(status=Match.Status.RUNNING).count(),
        oldest_queued_age_s=max(0.0, (now - oldest).total_seconds()) if oldest else 0.0,
        finished_last_hour=ended.get(Match.Status.FINISHED, 0),
        errored_last_hour=ended.get(Match.Status.ERRORED, 0),
        workers_seen=claimants.count(),
    )


class OperationsCollector:
    """`operations_summary` as gauges, read at each scrape (the web's ``/metrics``)."""

    def collect(self) -> Iterator[Any]:
        ops = operations_summary()
        for name, help_text, value in (
            ("ladder_matches_queued", "Matches waiting for a worker", ops.queued),
            ("ladder_matches_running", "Matches a worker is playing", ops.running),
            (
                "ladder_oldest_queued_match_age_seconds",
                "How long the oldest queued match has waited (0: none queued)",
                ops.oldest_queued_age_s,
            ),
            (
                "ladder_matches_finished_last_hour",
                "Matches recorded in the last hour",
                ops.finished_last_hour,
            ),
            (
                "ladder_matches_errored_last_hour",
                "Matches errored in the last hour",
                ops.errored_last_hour,
            ),
            (
                "ladder_workers_seen_last_hour",
                "Worker processes that claimed a match in the last hour",
                ops.workers_seen,
            ),
        ):
            yield GaugeMetricFamily(name, help_text, value)
        depth = GaugeMetricFamily(
            "ladder_broker_queue_messages",
            "Messages waiting in each broker queue (absent while the broker does not answer)",
            labels=["queue"],
        )
        for queue in settings.CELERY_TASK_QUEUES:
            count = queue_depth(queue)
            if count is not None:
                depth.add_metric([queue], count)
        yield depth
