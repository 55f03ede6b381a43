"""Metrics of the ladder's interfaces that Django middleware and the gRPC interceptor do
not see, and who may read ``/metrics``.

Requests by route and status and their latency come from django-prometheus
(web) and ``telemetry.rpc`` (Ladder gRPC); refusals by a rate limit are
counted here by interface and limit, so an operator sees a client hammering
the API without reading access logs.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings
from prometheus_client import Counter

THROTTLED = Counter(
    "ladder_throttled_total",
    "Requests refused by a rate limit (REST 429, gRPC RESOURCE_EXHAUSTED)",
    ["interface", "limit"],
)


@lru_cache(maxsize=8)
def _networks(spec: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(
        ipaddress.ip_network(part.strip(), strict=False) for part in spec.split(",") if part.strip()
    )


def metrics_reader_allowed(address: str) -> bool:
    """May a client at ``address`` read ``/metrics`` (``LADDER_METRICS_ALLOW``)?"""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in _networks(settings.LADDER_METRICS_ALLOW))
