"""Django settings, by part; every environment variable is read in ``environment``'s one way.

Each part reads its variables with an ``Environment`` of its own, which declares
them (name, default, unit, why); ``docs/settings.md`` is generated from those
declarations (``python -m ladder.settings.reference``) and checked by a test, so the
operator's table cannot drift from the code. Every value has an embedded default, so
``python manage.py runserver`` works on a fresh checkout (SQLite in ``var/``, local
files in ``var/media``, the broker in files). Production sets ``DATABASE_URL``,
``DJANGO_SECRET_KEY``, ``DJANGO_DEBUG=0``, and ``REDIS_URL`` for more than one machine.

The parts are imported below in the order they are read (a later part uses an earlier one's values).
"""

from __future__ import annotations

from ladder.settings import elsewhere as _elsewhere  # noqa: F401  (declared for the reference)
from ladder.settings.celery import *  # noqa: F403
from ladder.settings.competitions import *  # noqa: F403
from ladder.settings.connected import *  # noqa: F403
from ladder.settings.core import *  # noqa: F403
from ladder.settings.database import *  # noqa: F403
from ladder.settings.limits import *  # noqa: F403
from ladder.settings.logs import *  # noqa: F403
from ladder.settings.matchmaking import *  # noqa: F403
from ladder.settings.notifications import *  # noqa: F403
from ladder.settings.ratings import *  # noqa: F403
from ladder.settings.rest import *  # noqa: F403
from ladder.settings.sandbox import *  # noqa: F403
from ladder.settings.services import *  # noqa: F403
from ladder.settings.storage import *  # noqa: F403
from ladder.settings.web import *  # noqa: F403
from ladder.settings.workers import *  # noqa: F403
