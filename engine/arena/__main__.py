"""`python -m engine.arena`: see engine/arena/cli.py."""

import sys

from engine.arena.cli import main

sys.exit(main())
