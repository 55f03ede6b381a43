"""Crash at start, before serving."""

from probe import report

report("crashing", "now")
raise RuntimeError("hostile bot crashes at start")
