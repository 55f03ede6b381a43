"""Debian's Chromium for the browser tests and benchmarks: where it is and how it starts.

Never a downloaded browser: Playwright drives this one through `executable_path`.
The flags keep Chromium from reaching for the network on its own.
"""

from __future__ import annotations

import shutil
import time
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def wait_for_js(page: Any, expression: str, timeout_s: float = 15.0) -> None:
    """Wait until ``expression`` is true in ``page``.

    Playwright's ``wait_for_function`` compiles its predicate inside the page with
    ``new Function``, which the site's Content-Security-Policy (no ``unsafe-eval``)
    refuses; ``page.evaluate`` goes through the browser's debugging protocol, which no
    page policy restricts. Polled every 50 ms.
    """
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout_s} s: {expression}")
        time.sleep(0.05)
