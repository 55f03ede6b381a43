"""``/metrics``: the web process group's Prometheus metrics and the ladder's state.

Answered only to the networks ``LADDER_METRICS_ALLOW`` lists (loopback by
default), judged by the client address as every limit of the ladder sees it
(behind ``LADDER_NUM_PROXIES`` trusted proxies, the forwarded one): a proxy on
the same host must not make the figures public. Others get a plain 404, as if
there were nothing here. Under gunicorn the figures are summed over its worker
processes (``ladder/gunicorn.conf.py`` sets up prometheus-client's
multiprocess mode).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.files.storage import FileSystemStorage, default_storage
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from ladder.accounts.auth_limits import request_address
from ladder.common.metrics import metrics_reader_allowed
from ladder.matches.operations import OperationsCollector
from telemetry.metrics import exposition


class LadderCollector(OperationsCollector):
    """The ladder's state (`OperationsCollector`) and how full the media filesystem is."""

    def collect(self) -> Iterator[Any]:
        yield from super().collect()
        from prometheus_client.core import GaugeMetricFamily

        if isinstance(default_storage, FileSystemStorage):
            try:
                usage = shutil.disk_usage(settings.MEDIA_ROOT)
            except OSError:  # not made yet (nothing stored): no figure rather than an error
                return
            yield GaugeMetricFamily(
                "ladder_media_disk_used_ratio",
                "Share of the media filesystem (replays, uploads) in use",
                (usage.total - usage.free) / usage.total if usage.total else 0.0,
            )


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    if not metrics_reader_allowed(request_address(request)):
        raise Http404("no such page")
    body, content_type = exposition(extra=LadderCollector())
    return HttpResponse(body, content_type=content_type)
