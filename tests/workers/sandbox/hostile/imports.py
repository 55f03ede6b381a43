"""Import what a hosted bot may not: the project, Django, the machine's packages."""

import importlib

from probe import CONFIG, attempt, serve

for name in CONFIG["forbidden"] + CONFIG["allowed"]:
    attempt(f"import {name}", lambda name=name: importlib.import_module(name).__name__)
serve()
