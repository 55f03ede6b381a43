"""Files: replays and uploads (local files or an S3-compatible store), and static files."""

from __future__ import annotations

from typing import Any

from ladder.settings.core import DEBUG, VAR_DIR
from ladder.settings.environment import Environment

env = Environment("storage")

MEDIA_ROOT = env.text(
    "LADDER_MEDIA_ROOT",
    str(VAR_DIR / "media"),
    shown="var/media",
    why="where replays and uploads are kept when LADDER_STORAGE=file",
)
MEDIA_URL = "/media/"
STATIC_URL = "/static/"
STATIC_ROOT = env.text(
    "LADDER_STATIC_ROOT",
    str(VAR_DIR / "static"),
    shown="var/static",
    why="where collectstatic puts the site's static files; WhiteNoise serves them",
)
LADDER_STORAGE = env.choice(
    "LADDER_STORAGE",
    "file",
    ("file", "s3"),
    why="where replays and uploads go: local files, or an S3-compatible store (the s3 "
    "extra; django-storages then reads AWS_STORAGE_BUCKET_NAME, AWS_S3_ENDPOINT_URL, "
    "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_S3_REGION_NAME)",
)
_default_storage: dict[str, Any] = (
    {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {"file_overwrite": False, "default_acl": "private", "querystring_auth": True},
    }
    if LADDER_STORAGE == "s3"
    else {"BACKEND": "django.core.files.storage.FileSystemStorage"}
)
# Static files are served by WhiteNoise from STATIC_ROOT (``manage.py collectstatic``);
# in production under hashed names (cached forever), in development from the apps.
WHITENOISE_AUTOREFRESH = DEBUG  # decided here, not when a test runner flips DEBUG
STORAGES = {
    "default": _default_storage,
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
