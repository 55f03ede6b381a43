"""Read a process's ``/metrics`` the way Prometheus does, and add up samples."""

from __future__ import annotations

import socket
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def free_port() -> int:
    """A port nothing listens on right now (for a process's metrics server)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


Samples = dict[str, list[tuple[dict[str, str], float]]]


def scrape(url: str, timeout_s: float = 10.0) -> Samples:
    """Sample name -> [(labels, value)] from a text exposition at ``url``."""
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        text = response.read().decode()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return samples


def total(
    samples: dict[str, list[tuple[dict[str, str], float]]], name: str, **labels: str
) -> float:
    """Sum of ``name``'s samples whose labels include ``labels`` (0 when there are none)."""
    return sum(
        value
        for sample_labels, value in samples.get(name, [])
        if all(sample_labels.get(k) == v for k, v in labels.items())
    )
