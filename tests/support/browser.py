"""Debian's Chromium for the browser tests and benchmarks: where it is and how it starts.

Never a downloaded browser: Playwright drives this one through `executable_path`.
The flags keep Chromium from reaching for the network on its own.
"""

from __future__ import annotations

import shutil

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
