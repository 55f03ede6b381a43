"""Every browser test is here; the site's pages are driven on the played ladder of
``tests/web/conftest.py`` (its fixtures serve here too)."""

from tests.web.conftest import (  # noqa: F401
    browser,
    django_db_setup,
    orm,
    played_ladder,
    site,
    tab,
)
