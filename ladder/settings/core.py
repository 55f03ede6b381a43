"""Django itself: secrets, hosts, apps, middleware, templates, sign-in, time, security headers."""

from __future__ import annotations

from pathlib import Path

from csp import constants as csp_constants

from ladder.settings.environment import Environment

env = Environment("django")

BASE_DIR = Path(__file__).resolve().parents[2]
VAR_DIR = Path(
    env.text(
        "LADDER_VAR_DIR",
        str(BASE_DIR / "var"),
        shown="var/",
        why="where the embedded defaults keep their files: SQLite, media, broker, beat schedule",
    )
)
DEBUG = env.flag(
    "DJANGO_DEBUG", True, why="development mode: 0 in production (errors without tracebacks)"
)
DEV_SECRET_KEY = "dev-insecure-change-me-" + "x" * 32
SECRET_KEY = env.text(
    "DJANGO_SECRET_KEY",
    DEV_SECRET_KEY,
    shown="(a development key; required when DJANGO_DEBUG=0)",
    why="signs sessions, tokens and the relay's key; every process of one ladder shares it",
)
if not DEBUG and SECRET_KEY == DEV_SECRET_KEY:
    # Fail loudly rather than sign sessions with a key that is in the repository.
    raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG=0")
ALLOWED_HOSTS = env.items(
    "DJANGO_ALLOWED_HOSTS",
    "localhost,127.0.0.1,[::1],testserver",
    why="host names the site answers to",
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "ladder.accounts",
    "ladder.bots",
    "ladder.matches",
    "ladder.tournaments",
    "ladder.matchmaking",
    "ladder.finishing",
    "ladder.ratings",
    "ladder.grpc",
    "ladder.viewer",
    "ladder.web",
    "ladder.notifications",
    "ladder.competitions",
]

MIDDLEWARE = [
    # Outermost: requests by view, method and status and their latency (/metrics).
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "ladder.common.request_id.RequestIdMiddleware",  # first: its id covers every log line
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",  # a Content-Security-Policy on every page
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Query parameters and form fields longer than their limits are refused (400) before any
    # view runs or any query is made; before CSRF, which reads forms.
    "ladder.common.bounded.BoundedFieldsMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
    # A database outage (a PostgreSQL restart) answers 503 with Retry-After, not 500.
    "ladder.common.database_outage.DatabaseOutageMiddleware",
]

ROOT_URLCONF = "ladder.urls"
WSGI_APPLICATION = "ladder.wsgi.application"
AUTH_USER_MODEL = "accounts.User"
# Every username/password check (login page, admin, HTTP Basic) is limited per address and
# account, before the password is hashed (ladder.accounts.auth_limits).
AUTHENTICATION_BACKENDS = ["ladder.accounts.backends.LimitedModelBackend"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Django's own password rules, applied by the sign-up form (and the admin's password forms).
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

LOGIN_URL = "web:login"
LOGIN_REDIRECT_URL = "web:dashboard"
LOGOUT_REDIRECT_URL = "web:leaderboard"
CSRF_FAILURE_VIEW = "ladder.web.errors.csrf_failure"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp) on every response: scripts, styles, images, fonts
# and requests from this site only; no inline script but one carrying the page's nonce
# ({{ request.csp_nonce }}; the templates have none), no plugins, no framing, no
# <base>, forms post here only. An injected <script> or on*= handler does not run. The
# Swagger UI is served split (its script from a URL of its own). A response that sets
# its own policy (a bot's log: sandbox) keeps it.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'", csp_constants.NONCE],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    },
}
