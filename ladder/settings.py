"""Django settings, read from the environment in this one place.

Every value has an embedded default so ``python manage.py runserver`` works on a
fresh checkout (SQLite in ``var/``, local files in ``var/media``). Production-like
deployments set ``DATABASE_URL`` (PostgreSQL), ``DJANGO_SECRET_KEY``,
``DJANGO_DEBUG=0`` and, for an S3-compatible store, ``LADDER_STORAGE=s3``.

Environment variables
---------------------
DJANGO_SECRET_KEY, DJANGO_DEBUG (1/0), DJANGO_ALLOWED_HOSTS (comma list)
DATABASE_URL            unset → SQLite ``var/ladder.sqlite3`` (WAL, BEGIN IMMEDIATE, busy timeout)
LADDER_DB_CONN_MAX_AGE  seconds a database connection is reused (default 0: one per request;
                        compose sets 60: a new PostgreSQL connection costs more than a read)
LADDER_DB_JIT           PostgreSQL's JIT compilation for this process's queries (default 0: off;
                        1 leaves the server's setting): the ladder's queries are short, and a
                        plan whose estimate passes ``jit_above_cost`` spent 10-30 ms compiling
                        what runs in 1 ms (docs/web.md)
LADDER_SQLITE_TIMEOUT   busy timeout in seconds (default 20)
LADDER_SQLITE_TEST_NAME, LADDER_TEST_DB_NAME  test database (default: one per test run)
LADDER_MEDIA_ROOT       local storage root (default ``var/media``)
LADDER_STATIC_ROOT      where ``collectstatic`` puts the site's static files (default
                        ``var/static``); WhiteNoise serves them, hashed when DJANGO_DEBUG=0
LADDER_STORAGE          ``file`` (default) or ``s3`` (the ``s3`` extra of the project;
                        then AWS_STORAGE_BUCKET_NAME, AWS_S3_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
                        AWS_SECRET_ACCESS_KEY, AWS_S3_REGION_NAME are read by django-storages)
LADDER_LADDERS          ladders, ``KEY=RULESET/DIFFICULTY/MIN-MAX`` comma-separated
                        (default ``dd-2=dd-2/normal/2-4,dd-1=dd-1/normal/2-4``); see
                        ``ladder/ladders.py``
LADDER_DEFAULT_LADDER   the ladder used when a request names none (default ``dd-2``)
LADDER_ELO_K            K factor (default 32)
LADDER_ELO_START        start rating in points (default 1500)
LADDER_PROVISIONAL_GAMES  games below which a bot is provisional, whatever its sigma (default 10)
LADDER_RATING_SYSTEM    rating system of a new ladder's first season: plackett-luce (default),
                        bradley-terry or elo (docs/ratings.md)
LADDER_RATING_K_SIGMA   k of the conservative rating mu - k*sigma the board ranks by (default 3)
LADDER_PROVISIONAL_SIGMA  sigma (points) above which a rating is provisional (default 135: a
                        95 % interval wider than +-265; chosen by bench/ratings_bench.py)
LADDER_SEASON_SHRINK    share of (rating - 1500) a new season keeps (default 0.5)
LADDER_EXPORT_MAX_MATCHES  matches one REST game export holds (default 10000)
LADDER_EXPORT_THROTTLE  REST game exports per user (default 20/hour)
LADDER_DEV_MODE         1 allows loopback bot endpoints (default: DJANGO_DEBUG)
LADDER_ENDPOINT_ALLOWED_NETWORKS  comma list of CIDRs allowed in addition to public addresses
LADDER_UPLOAD_MAX_BYTES (default 1 MiB), LADDER_UPLOAD_MAX_UNPACKED_BYTES (default 8 MiB),
LADDER_UPLOAD_MAX_FILES (default 200), LADDER_REPLAY_MAX_BYTES (default 32 MiB)
LADDER_THROTTLE_ANON, LADDER_THROTTLE_USER  DRF rates (default 60/min, 600/min)
LADDER_GRPC_THROTTLE    gRPC calls per token (anonymous: per address) (default 600/min)
LADDER_PRESENCE_URL     Redis where connected bots' open streams are recorded (default REDIS_URL,
                        else LADDER_CACHE_URL; unset: in the database, for processes sharing
                        it), key prefix LADDER_PRESENCE_PREFIX (default ``dd:``);
                        docs/connected-bots.md
LADDER_CONNECT_NEW_VERSIONS_PER_DAY  new version labels a connected bot may name a day (50)
LADDER_CONNECT_SEAT_WAIT_S  seconds a worker waits for a connected bot's stream before a match
                        that seats it (default 10); absent then, the match is void, no forfeit
LADDER_RELAY_LISTEN     internal address each grpcserver serves the worker relay on (default
                        127.0.0.1:0); LADDER_RELAY_ADVERTISE the address workers dial (default
                        the bound one)
LADDER_CONNECT_*        Play limits: STREAMS_PER_BOT (4), STREAMS_PER_USER (16),
                        STREAMS_PER_PROCESS (256), MESSAGES_PER_S (50), MAX_MESSAGE_BYTES
                        (262144), PING_INTERVAL_S (10), PING_TIMEOUT_S (20)
LADDER_AUTH_FAILURES_PER_ADDRESS  failed authentications per client address (default 30/15min)
LADDER_AUTH_FAILURES_PER_ACCOUNT  failed password logins per account (default 10/15min)
LADDER_NUM_PROXIES      trusted reverse proxies in front of web and gRPC (default 0: the client
                        address is the socket's peer; X-Forwarded-For is only read when > 0)
LADDER_CACHE_URL        redis://host:port/db for a cache shared by every process (throttles,
                        failure counts, built replay timelines); unset: per-process memory
LADDER_CACHE_PREFIX     key prefix in that cache (deployments or test runs sharing one database)
LADDER_LOG_LEVEL        log level (default INFO); to stderr, errors with their traceback and every
                        line with its request id, also with DJANGO_DEBUG=0
LADDER_LOG_FORMAT       ``line`` (default: readable lines) or ``json`` (one JSON object per line
                        with the request id, match id and worker, for a log pipeline)
LADDER_METRICS_PORT     the port this process serves Prometheus ``/metrics`` on (engine, worker,
                        Ladder gRPC, the web's gunicorn master; empty or 0: none)
LADDER_METRICS_ADDR     the address it binds (default 127.0.0.1)
LADDER_METRICS_ALLOW    networks that may read the web's ``/metrics`` page, comma list of CIDRs
                        (default loopback: 127.0.0.0/8,::1/128)
LADDER_VIEWER_UPLOAD_MAX_BYTES (default 1 MiB), LADDER_VIEWER_JSON_MAX_BYTES (default 8 MiB),
LADDER_VIEWER_CACHE_SECONDS (default 7 days), LADDER_VIEWER_UPLOAD_RATE (default 30/min per
                        client address)  the replay viewer (docs/replay-timeline.md)
LADDER_COMPARISON_MAX_DEALS  deals one version comparison may ask for (default 50)
LADDER_COMPARISONS_OPEN_PER_USER  comparisons a user may have being played at once (default 2)
ENGINE_ADDRESS          the engine(s) matches are played on: ``host:port``, a comma list, or a
                        DNS name of replicas (default: each worker process starts its own)

Workers (Celery; docs/workers.md says why each value is what it is)
-------------------------------------------------------------------
CELERY_BROKER_URL       the broker; else REDIS_URL; else the embedded broker (files in
                        LADDER_BROKER_DIR, default ``var/broker``: no server needed)
LADDER_MATCH_QUEUE      queue of the match task (default ``matches``)
LADDER_MATCH_DECISION_S per-decision deadline (default 1.0), LADDER_MATCH_BANK_S seat bank (30)
LADDER_MATCH_MAX_DECISIONS  decisions a match is budgeted (default 1000)
LADDER_MATCH_HOSTED_CLOCK  ``cpu`` (default): hosted seats are charged their CPU time, at
                        least wall / LADDER_MATCH_CPU_WALL_FACTOR (3); ``wall``: wall time
LADDER_MATCH_WALL_S     wall-clock limit of one match in the runner (default derived:
                        decisions x deadline (x the factor when hosted seats are charged CPU)
                        + 4 banks + 60 s); the task's soft limit is above
                        it (+ one decision with a whole bank + engine resume + 60 s), the hard
                        limit 30 s above that, Redis's visibility timeout twice the hard limit
LADDER_ENGINE_RESUME_S  how long a game whose engine died waits for an engine (default 30)
LADDER_MATCH_STREAMS    0 plays matches by unary calls only (bot protocol 1, no engine Play
                        stream); default 1: one stream per seat and per game (docs/protocol.md)
LADDER_MATCH_LEASE_S    a claim's lease, renewed by a heartbeat every quarter (default 60)
LADDER_MATCH_MAX_ATTEMPTS  claims of one match before it is errored (default 3)
LADDER_MATCH_RETRY_BACKOFF_S  first retry delay, doubled each attempt, jittered (default 10)
LADDER_BLAME_CONTROLS   host:port list of known-good peers a worker tries before charging a
                        bot whose connection failed (docs/workers.md, "whose fault")
LADDER_WORKER_OWN_FAULT_COOLDOWN_S  how long a worker that released a match for an outage of its
                        own (cut off from the bots, no engine) claims nothing (default 20)
LADDER_CONNECT_RELAY_GRACE_S  how long a connected seat whose stream the ladder lost (its
                        grpcserver stopped or cut off) waits for the bot to reconnect before
                        the match is released, nobody charged (default 30: a restart)
LADDER_JANITOR_INTERVAL_S  how often beat runs the janitor (default 60)
LADDER_QUEUED_GRACE_S   a queued match whose message is older than this is sent again
                        (default 600; must exceed the longest retry delay)
LADDER_SANDBOX_UNSAFE_DEV_MODE  1 runs hosted bots WITHOUT isolation where the sandbox cannot
                        run (no bubblewrap or user namespaces); development only (default 0)
LADDER_SANDBOX_UIDS     uids for hosted bots of a root worker, one per seat (default
                        2000000000-2000099999)
LADDER_SANDBOX_START_S  seconds a hosted bot has to serve (default 15)
LADDER_SMOKE_START_ATTEMPTS  smoke attempts a start timeout gets before it may count against
                        the version (default 3; attempt k has k times the start limit;
                        workers/smoke.py)
LADDER_WORKER_ALIVE_FILE  a file the worker's main process touches at each broker ping that
                        answers (default empty: none); the container healthcheck reads its age
LADDER_SANDBOX_CPU_S, LADDER_SANDBOX_MEMORY_MB  per-seat CPU seconds (300) and address space (1024)
LADDER_SANDBOX_LOG_BYTES  output kept per hosted seat and match (default 65536)
LADDER_SANDBOX_CGROUP   cgroup v2 directory delegated to the workers for per-seat cgroups
                        (default: the worker's own cgroup, where writable)
LADDER_SANDBOX_CPUS     cores' worth of CPU one hosted seat may use (cpu.max; default 1)
LADDER_QUOTA_*          per-user quotas: BOTS_PER_USER (20), VERSIONS_PER_BOT (20 stored; older
                        ones no open match pins are pruned), BYTES_PER_USER (100 MiB),
                        OPEN_CHALLENGES (10), CHALLENGES_PER_DAY (200), COMPARISONS_PER_DAY
                        (20; open ones: LADDER_COMPARISONS_OPEN_PER_USER); 0 = unlimited

Matchmaking and auto-suspend (docs/matchmaking.md)
--------------------------------------------------
LADDER_MATCHMAKER_TARGET  open (queued + running) matches the matchmaker keeps on each of its
                        ladders (default 4; 0 switches the matchmaker off)
LADDER_MATCHMAKER_LADDERS  ladders it fills, comma list (default: the default ladder)
LADDER_MATCHMAKER_INTERVAL_S  how often beat runs it (default 30)
LADDER_MATCHMAKER_SEATS seat mix, ``SEATS:WEIGHT`` comma list (default ``2:2,3:1,4:1``; seat
                        counts the ladder does not play are dropped)
LADDER_MATCHMAKER_MAX_CONCURRENT  open matches one bot may be in at once (default 2)
LADDER_MATCHMAKER_RECENT_H  hours of matches counted as a bot's recent games (default 24)
LADDER_MATCHMAKER_RATING_SCALE  rating gap (points) at which an opponent's weight is 1/e
                        (default 200)
LADDER_MATCHMAKER_DUPLICATES  duplicate sets: ``off`` (default), ``on`` (every table that fits),
                        or a share of tables in [0, 1], e.g. ``0.25``; a set of n seats is n
                        matches and needs LADDER_MATCHMAKER_MAX_CONCURRENT >= n
LADDER_SUSPEND_WINDOW   finished matches looked at for auto-suspend (default 10; 0: off)
LADDER_SUSPEND_CONSECUTIVE  forfeits in a row that suspend (default 3)
LADDER_SUSPEND_FORFEITS forfeits within the window that suspend (default 5)
LADDER_SUSPEND_FAULTS   faults within the window that suspend (default 20)

Notifications (docs/notifications.md)
-------------------------------------
LADDER_SITE_URL         the site's public address, for links in e-mails and webhooks
                        (default http://127.0.0.1:8000)
EMAIL_HOST, EMAIL_PORT (25), EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS (0),
EMAIL_USE_SSL (0), EMAIL_TIMEOUT (10)  Django's SMTP settings; without EMAIL_HOST e-mails
                        are written to the worker's output (EMAIL_BACKEND overrides)
DEFAULT_FROM_EMAIL      the sender (default ``Digging Down Ladder <ladder@localhost>``);
                        SERVER_EMAIL (default the same)
LADDER_NOTIFY_TIMEOUT_S one attempt's deadline (default 10)
LADDER_NOTIFY_MAX_ATTEMPTS  attempts of one message (default 8)
LADDER_NOTIFY_RETRY_BACKOFF_S, LADDER_NOTIFY_RETRY_MAX_S, LADDER_NOTIFY_RETRY_JITTER  first retry
                        delay, doubled each retry up to the maximum, jittered (30, 3600, 1)
LADDER_NOTIFY_SWEEP_S   how often beat sends again messages still owed (default 120)
LADDER_NOTIFY_REFUSED_QUIET_S  a connected bot refused again for the same reason is told at
                        most once per this long (default 3600)
Competitions and private tournaments (docs/competitions.md)
------------------------------------------------------------
LADDER_COMPETITION_TICK_S  how often beat moves competitions' phases and advances their finals
                        (default 10)
LADDER_COMPETITION_RESAMPLES  bootstrap resamples of a final's order (default 400)
LADDER_COMPETITION_MAX_GAMES  the largest game cap a final may set (default 20000)
LADDER_QUOTA_PRIVATE_TOURNAMENTS_PER_DAY  private tournaments a user creates a day (default 5)
LADDER_PRIORITY_PRIVATE  broker priority of private tournaments' matches (default 3: after
                        public events at LADDER_PRIORITY_EVENTS, before the ladder's)
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dj_database_url
from csp import constants as csp_constants

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("LADDER_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    """Read a boolean env var; accepts 1/0, true/false, yes/no."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    """Read a comma-separated env var into a list without empty items."""
    return [p.strip() for p in os.environ.get(name, default).split(",") if p.strip()]


def env_ladders(name: str) -> dict[str, dict[str, object]]:
    """``KEY=RULESET/DIFFICULTY/MIN-MAX[/SYSTEM][,...]`` -> {key: {ruleset, difficulty, seats,
    system}} (the rating system of the ladder's first season; default ``LADDER_RATING_SYSTEM``).

    Only the shape is read here; ``ladder.ladders`` checks the values.
    """
    out: dict[str, dict[str, object]] = {}
    for item in env_list(name):
        m = re.fullmatch(r"([^=\s]+)=([^/\s]+)/([^/\s]+)/(\d)-(\d)(?:/([a-z-]+))?", item)
        if not m:
            raise RuntimeError(f"{name}: {item!r} is not KEY=RULESET/DIFFICULTY/MIN-MAX[/SYSTEM]")
        key, ruleset, difficulty, low, high, system = m.groups()
        out[key] = {"ruleset": ruleset, "difficulty": difficulty, "seats": (int(low), int(high))}
        if system:
            out[key]["system"] = system
    return out


DEBUG = env_bool("DJANGO_DEBUG", True)
DEV_SECRET_KEY = "dev-insecure-change-me-" + "x" * 32
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", DEV_SECRET_KEY)
if not DEBUG and SECRET_KEY == DEV_SECRET_KEY:
    # Fail loudly rather than sign sessions with a key that is in the repository.
    raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG=0")
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")

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
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]
LADDER_METRICS_ALLOW = os.environ.get("LADDER_METRICS_ALLOW", "127.0.0.0/8,::1/128")

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

# --- database ---------------------------------------------------------------
SQLITE_TIMEOUT = int(os.environ.get("LADDER_SQLITE_TIMEOUT", "20"))
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'ladder.sqlite3'}",
        # Seconds a connection is kept for the next request or call (0: one per request).
        # Long-running services want it: a new PostgreSQL connection costs more than
        # most reads. Checked before reuse, so a dropped connection is replaced.
        conn_max_age=int(os.environ.get("LADDER_DB_CONN_MAX_AGE", "0")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite: BEGIN IMMEDIATE takes the write lock up front, so the busy timeout applies
    # instead of failing at once on a read→write upgrade; WAL lets readers run alongside.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": SQLITE_TIMEOUT,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # Tests need a real file (not an in-memory one) so that other processes see the
    # same database; one
    # per test run (pid), so concurrent runs in the same checkout do not collide.
    DATABASES["default"]["TEST"] = {
        "NAME": os.environ.get(
            "LADDER_SQLITE_TEST_NAME",
            str(Path(tempfile.gettempdir()) / f"digdown-ladder-test-{os.getpid()}.sqlite3"),
        )
    }
    VAR_DIR.mkdir(parents=True, exist_ok=True)
else:
    if os.environ.get("LADDER_DB_JIT", "0") != "1":
        # Every query of the ladder reads a page of rows through indexes, but a LIMIT over
        # a nested loop is estimated at its full cost, above ``jit_above_cost``; the server
        # then compiled 30 functions (10-30 ms) for a query that runs in about 1 ms.
        _options = DATABASES["default"].setdefault("OPTIONS", {})
        _options["options"] = f"{_options.get('options', '')} -c jit=off".strip()
    # Deadlines on the connection itself: a server that stops answering (a cut link drops
    # packets, no reset) would otherwise hold a connect for minutes and a query until the
    # kernel gives up on the socket (about 15 minutes). libpq's own settings: connect
    # within LADDER_DB_CONNECT_TIMEOUT, drop a socket whose sent data goes unacknowledged
    # for LADDER_DB_TCP_USER_TIMEOUT_MS, and probe an idle one with keepalives. A query
    # that runs long without sending is not cut: the server acknowledges what it received.
    _deadlines = DATABASES["default"].setdefault("OPTIONS", {})
    _deadlines.setdefault("connect_timeout", int(os.environ.get("LADDER_DB_CONNECT_TIMEOUT", "5")))
    _deadlines.setdefault(
        "tcp_user_timeout", int(os.environ.get("LADDER_DB_TCP_USER_TIMEOUT_MS", "30000"))
    )
    _deadlines.setdefault("keepalives", 1)
    _deadlines.setdefault("keepalives_idle", 10)
    _deadlines.setdefault("keepalives_interval", 5)
    _deadlines.setdefault("keepalives_count", 3)
    # One test database per test run, for the same reason.
    DATABASES["default"]["TEST"] = {
        "NAME": os.environ.get(
            "LADDER_TEST_DB_NAME", f"test_{DATABASES['default']['NAME']}_{os.getpid()}"
        )
    }

# --- storage ----------------------------------------------------------------
MEDIA_ROOT = os.environ.get("LADDER_MEDIA_ROOT", str(VAR_DIR / "media"))
MEDIA_URL = "/media/"
STATIC_URL = "/static/"
STATIC_ROOT = os.environ.get("LADDER_STATIC_ROOT", str(VAR_DIR / "static"))
LADDER_STORAGE = os.environ.get("LADDER_STORAGE", "file")
if LADDER_STORAGE == "s3":
    _default_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {"file_overwrite": False, "default_acl": "private", "querystring_auth": True},
    }
elif LADDER_STORAGE == "file":
    _default_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
else:
    raise RuntimeError(f"LADDER_STORAGE must be 'file' or 's3', not {LADDER_STORAGE!r}")
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

# --- ladder -------------------------------------------------------------------
# A ladder is a ruleset and a difficulty with the seat counts it plays; each has its
# own ratings (ladder/ladders.py). Requests that name no ladder use the default.
LADDER_LADDERS = (
    env_ladders("LADDER_LADDERS")
    if os.environ.get("LADDER_LADDERS")
    else {
        # dd-2 (rules §11: riders pay their share of a return) is the ladder's game;
        # dd-1 stays available for anyone who asks for it.
        "dd-2": {"ruleset": "dd-2", "difficulty": "normal", "seats": (2, 4)},
        "dd-1": {"ruleset": "dd-1", "difficulty": "normal", "seats": (2, 4)},
    }
)
LADDER_DEFAULT_LADDER = os.environ.get("LADDER_DEFAULT_LADDER", "dd-2")
LADDER_ELO_K = float(os.environ.get("LADDER_ELO_K", "32"))
LADDER_ELO_START = round(float(os.environ.get("LADDER_ELO_START", "1500")) * 100)
LADDER_PROVISIONAL_GAMES = int(os.environ.get("LADDER_PROVISIONAL_GAMES", "10"))
# Ratings (docs/ratings.md): the system a new ladder's first season rates with (the
# winner of bench/ratings_bench.py; "elo" stays selectable per ladder), the k of the
# conservative rating mu - k*sigma the leaderboard ranks by, and the sigma above which a
# rating is provisional (default 135 points, ladder.ratings.elo.DEFAULT_PROVISIONAL_SIGMA).
LADDER_RATING_SYSTEM = os.environ.get("LADDER_RATING_SYSTEM", "plackett-luce")
LADDER_RATING_K_SIGMA = float(os.environ.get("LADDER_RATING_K_SIGMA", "3"))
LADDER_PROVISIONAL_SIGMA = (
    round(float(os.environ["LADDER_PROVISIONAL_SIGMA"]) * 100)
    if os.environ.get("LADDER_PROVISIONAL_SIGMA")
    else None
)
LADDER_SEASON_SHRINK = float(os.environ.get("LADDER_SEASON_SHRINK", "0.5"))
# Game exports (docs/ratings.md): matches one REST export may hold; REST exports per user.
LADDER_EXPORT_MAX_MATCHES = int(os.environ.get("LADDER_EXPORT_MAX_MATCHES", "10000"))
LADDER_DEV_MODE = env_bool("LADDER_DEV_MODE", DEBUG)
LADDER_ENDPOINT_ALLOWED_NETWORKS = env_list("LADDER_ENDPOINT_ALLOWED_NETWORKS")
LADDER_UPLOAD_MAX_BYTES = int(os.environ.get("LADDER_UPLOAD_MAX_BYTES", str(1024 * 1024)))
LADDER_UPLOAD_MAX_UNPACKED_BYTES = int(
    os.environ.get("LADDER_UPLOAD_MAX_UNPACKED_BYTES", str(8 * 1024 * 1024))
)
LADDER_UPLOAD_MAX_FILES = int(os.environ.get("LADDER_UPLOAD_MAX_FILES", "200"))
LADDER_REPLAY_MAX_BYTES = int(os.environ.get("LADDER_REPLAY_MAX_BYTES", str(32 * 1024 * 1024)))
# Multipart uploads above this size go to a temp file instead of memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = LADDER_UPLOAD_MAX_BYTES + 64 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
LADDER_GRPC_THROTTLE = os.environ.get("LADDER_GRPC_THROTTLE", "600/min")
# --- connected bots (Ladder.Play, docs/connected-bots.md) ---
LADDER_PRESENCE_URL = (
    os.environ.get("LADDER_PRESENCE_URL")
    or os.environ.get("REDIS_URL")
    or os.environ.get("LADDER_CACHE_URL")
    or ""
)
LADDER_PRESENCE_PREFIX = os.environ.get("LADDER_PRESENCE_PREFIX", "dd:")
LADDER_RELAY_LISTEN = os.environ.get("LADDER_RELAY_LISTEN", "127.0.0.1:0")
LADDER_RELAY_ADVERTISE = os.environ.get("LADDER_RELAY_ADVERTISE", "")
LADDER_CONNECT_STREAMS_PER_BOT = int(os.environ.get("LADDER_CONNECT_STREAMS_PER_BOT", "4"))
LADDER_CONNECT_STREAMS_PER_USER = int(os.environ.get("LADDER_CONNECT_STREAMS_PER_USER", "16"))
LADDER_CONNECT_STREAMS_PER_PROCESS = int(
    os.environ.get("LADDER_CONNECT_STREAMS_PER_PROCESS", "256")
)
LADDER_CONNECT_MESSAGES_PER_S = int(os.environ.get("LADDER_CONNECT_MESSAGES_PER_S", "50"))
LADDER_CONNECT_MAX_MESSAGE_BYTES = int(
    os.environ.get("LADDER_CONNECT_MAX_MESSAGE_BYTES", str(256 * 1024))
)
LADDER_CONNECT_PING_INTERVAL_S = float(os.environ.get("LADDER_CONNECT_PING_INTERVAL_S", "10"))
LADDER_CONNECT_PING_TIMEOUT_S = float(os.environ.get("LADDER_CONNECT_PING_TIMEOUT_S", "20"))
LADDER_AUTH_FAILURES_PER_ADDRESS = os.environ.get("LADDER_AUTH_FAILURES_PER_ADDRESS", "30/15min")
LADDER_AUTH_FAILURES_PER_ACCOUNT = os.environ.get("LADDER_AUTH_FAILURES_PER_ACCOUNT", "10/15min")
# Self sign-up on the site (/accounts/signup/); off for a private ladder (accounts by staff).
LADDER_SIGNUP = env_bool("LADDER_SIGNUP", True)
# New accounts per client address (a fixed window; "off" for none).
LADDER_SIGNUPS_PER_ADDRESS = os.environ.get("LADDER_SIGNUPS_PER_ADDRESS", "5/hour")
ENGINE_ADDRESS = os.environ.get("ENGINE_ADDRESS", "")
# Hosted bots (docs/sandbox.md).
LADDER_SANDBOX_UNSAFE_DEV_MODE = env_bool("LADDER_SANDBOX_UNSAFE_DEV_MODE", False)
LADDER_SANDBOX_UIDS = os.environ.get("LADDER_SANDBOX_UIDS", "2000000000-2000099999")
LADDER_SANDBOX_START_S = float(os.environ.get("LADDER_SANDBOX_START_S", "15"))
LADDER_SANDBOX_CPU_S = int(os.environ.get("LADDER_SANDBOX_CPU_S", "300"))
LADDER_SANDBOX_MEMORY_MB = int(os.environ.get("LADDER_SANDBOX_MEMORY_MB", "1024"))
LADDER_SANDBOX_LOG_BYTES = int(os.environ.get("LADDER_SANDBOX_LOG_BYTES", "65536"))
# A cgroup v2 directory delegated to the workers ("": each worker's own cgroup).
LADDER_SANDBOX_CGROUP = os.environ.get("LADDER_SANDBOX_CGROUP", "")
LADDER_SANDBOX_CPUS = float(os.environ.get("LADDER_SANDBOX_CPUS", "1"))
# Per-user quotas (docs/operations.md); 0 is unlimited; staff are exempt.
LADDER_QUOTA_BOTS_PER_USER = int(os.environ.get("LADDER_QUOTA_BOTS_PER_USER", "20"))
LADDER_QUOTA_VERSIONS_PER_BOT = int(os.environ.get("LADDER_QUOTA_VERSIONS_PER_BOT", "20"))
LADDER_QUOTA_BYTES_PER_USER = int(
    os.environ.get("LADDER_QUOTA_BYTES_PER_USER", str(100 * 1024 * 1024))
)
LADDER_QUOTA_OPEN_CHALLENGES = int(os.environ.get("LADDER_QUOTA_OPEN_CHALLENGES", "10"))
LADDER_QUOTA_CHALLENGES_PER_DAY = int(os.environ.get("LADDER_QUOTA_CHALLENGES_PER_DAY", "200"))
LADDER_QUOTA_COMPARISONS_PER_DAY = int(os.environ.get("LADDER_QUOTA_COMPARISONS_PER_DAY", "20"))

# --- workers (Celery) -----------------------------------------------------------
# Every value below is explained in docs/workers.md. The ladder enqueues by task
# name (ladder/matches/queue.py); the workers' app (workers/celery_app.py) reads
# this same section, so producer and consumer cannot disagree.
LADDER_TASK_PLAY_MATCH = "workers.play_match"
LADDER_TASK_JANITOR = "workers.janitor"
LADDER_TASK_SMOKE_VERSION = "workers.smoke_version"
LADDER_MATCH_QUEUE = os.environ.get("LADDER_MATCH_QUEUE", "matches")
# Broker message priorities of play-match messages. Redis (kombu) keeps one list per
# step 0, 3, 6, 9 and a worker takes from 0 first: tournament and version-comparison
# matches (Match.priority > 0) are sent at 0, ladder matches at 6, so a free worker
# plays the events' matches first. The embedded broker is FIFO and ignores them.
LADDER_PRIORITY_EVENTS = 0
# Version comparisons (docs/tournaments.md): deals per comparison, and how many a user
# may have being played at once (each deal is seats matches per version).
LADDER_COMPARISON_MAX_DEALS = int(os.environ.get("LADDER_COMPARISON_MAX_DEALS", "50"))
LADDER_COMPARISONS_OPEN_PER_USER = int(os.environ.get("LADDER_COMPARISONS_OPEN_PER_USER", "2"))
LADDER_PRIORITY_LADDER = 6
LADDER_MATCH_DECISION_S = float(os.environ.get("LADDER_MATCH_DECISION_S", "1.0"))
LADDER_MATCH_BANK_S = float(os.environ.get("LADDER_MATCH_BANK_S", "30"))
LADDER_MATCH_MAX_DECISIONS = int(os.environ.get("LADDER_MATCH_MAX_DECISIONS", "1000"))
# What a hosted seat is charged: "cpu" (its CPU time, at least its wall time / the factor)
# or "wall"; remote and connected seats are always charged wall time (docs/sandbox.md).
LADDER_MATCH_HOSTED_CLOCK = os.environ.get("LADDER_MATCH_HOSTED_CLOCK", "cpu")
if LADDER_MATCH_HOSTED_CLOCK not in ("cpu", "wall"):
    raise RuntimeError("LADDER_MATCH_HOSTED_CLOCK must be cpu or wall")
LADDER_MATCH_CPU_WALL_FACTOR = float(os.environ.get("LADDER_MATCH_CPU_WALL_FACTOR", "3"))
_WALL_PER_DECISION_S = LADDER_MATCH_DECISION_S * (
    LADDER_MATCH_CPU_WALL_FACTOR if LADDER_MATCH_HOSTED_CLOCK == "cpu" else 1
)
LADDER_MATCH_WALL_S = float(
    os.environ.get("LADDER_MATCH_WALL_S")
    or LADDER_MATCH_MAX_DECISIONS * _WALL_PER_DECISION_S + 4 * LADDER_MATCH_BANK_S + 60
)
LADDER_ENGINE_RESUME_S = float(os.environ.get("LADDER_ENGINE_RESUME_S", "30"))
LADDER_MATCH_STREAMS = os.environ.get("LADDER_MATCH_STREAMS", "1") != "0"
# Above the runner's own limit by what may still happen after its last check: one
# decision with a whole bank, an engine resume, and recording.
LADDER_MATCH_SOFT_LIMIT_S = round(
    LADDER_MATCH_WALL_S
    + (LADDER_MATCH_DECISION_S + LADDER_MATCH_BANK_S)
    + LADDER_ENGINE_RESUME_S
    + 60
)
LADDER_MATCH_HARD_LIMIT_S = LADDER_MATCH_SOFT_LIMIT_S + 30
# A smoke match is one short easy game: a sandbox start, at most a whole bank, slack.
LADDER_SMOKE_SOFT_LIMIT_S = round(LADDER_SANDBOX_START_S + LADDER_MATCH_BANK_S + 120)
LADDER_MATCH_LEASE_S = float(os.environ.get("LADDER_MATCH_LEASE_S", "60"))
LADDER_MATCH_MAX_ATTEMPTS = int(os.environ.get("LADDER_MATCH_MAX_ATTEMPTS", "3"))
LADDER_MATCH_RETRY_BACKOFF_S = float(os.environ.get("LADDER_MATCH_RETRY_BACKOFF_S", "10"))
# Known-good peers (host:port) a worker connects to before charging a bot whose link
# failed: when neither the bot nor these answer, the worker is the one cut off.
LADDER_BLAME_CONTROLS = [
    a.strip() for a in os.environ.get("LADDER_BLAME_CONTROLS", "").split(",") if a.strip()
]
LADDER_JANITOR_INTERVAL_S = float(os.environ.get("LADDER_JANITOR_INTERVAL_S", "60"))
LADDER_QUEUED_GRACE_S = float(os.environ.get("LADDER_QUEUED_GRACE_S", "600"))
# Matchmaking and auto-suspend (docs/matchmaking.md).
LADDER_TASK_MATCHMAKE = "workers.matchmake"
LADDER_MATCHMAKER_TARGET = int(os.environ.get("LADDER_MATCHMAKER_TARGET", "4"))
LADDER_MATCHMAKER_LADDERS = env_list("LADDER_MATCHMAKER_LADDERS")  # empty: the default ladder
LADDER_MATCHMAKER_INTERVAL_S = float(os.environ.get("LADDER_MATCHMAKER_INTERVAL_S", "30"))
LADDER_MATCHMAKER_SEATS = os.environ.get("LADDER_MATCHMAKER_SEATS", "2:2,3:1,4:1")
LADDER_MATCHMAKER_MAX_CONCURRENT = int(os.environ.get("LADDER_MATCHMAKER_MAX_CONCURRENT", "2"))
LADDER_MATCHMAKER_RECENT_H = float(os.environ.get("LADDER_MATCHMAKER_RECENT_H", "24"))
LADDER_MATCHMAKER_RATING_SCALE = float(os.environ.get("LADDER_MATCHMAKER_RATING_SCALE", "200"))
LADDER_MATCHMAKER_DUPLICATES = os.environ.get("LADDER_MATCHMAKER_DUPLICATES", "off")
LADDER_SUSPEND_WINDOW = int(os.environ.get("LADDER_SUSPEND_WINDOW", "10"))
LADDER_SUSPEND_CONSECUTIVE = int(os.environ.get("LADDER_SUSPEND_CONSECUTIVE", "3"))
LADDER_SUSPEND_FORFEITS = int(os.environ.get("LADDER_SUSPEND_FORFEITS", "5"))
LADDER_SUSPEND_FAULTS = int(os.environ.get("LADDER_SUSPEND_FAULTS", "20"))
LADDER_BROKER_DIR = Path(os.environ.get("LADDER_BROKER_DIR", VAR_DIR / "broker"))


def celery_broker(
    environ: Mapping[str, str], broker_dir: Path, hard_limit_s: float
) -> tuple[str, str | None, dict[str, Any]]:
    """(CELERY_BROKER_URL, CELERY_BROKER_TRANSPORT, CELERY_BROKER_TRANSPORT_OPTIONS).

    CELERY_BROKER_URL, else REDIS_URL, else the embedded broker: files under
    ``broker_dir`` (``ladder/common/broker.py``), created here so a fresh
    checkout needs nothing. A function so tests configure their own broker
    the same way the environment does.
    """
    url = environ.get("CELERY_BROKER_URL") or environ.get("REDIS_URL") or ""
    if url:
        return url, None, {
            # A message unacked for this long is delivered again: above the hard limit, so a
            # match that is still being played is never handed to a second worker.
            "visibility_timeout": 2 * hard_limit_s,
            # A Redis that is cut off (no RST, packets dropped) is noticed within seconds:
            # a command waits at most socket_timeout; kombu pings and drops a BRPOP
            # connection whose reply is overdue by health_check_interval (the worker logs
            # "connection to broker lost" and reconnects); TCP keepalive for the rest.
            "socket_timeout": 5,
            "socket_connect_timeout": 3,
            "health_check_interval": 2,
            "socket_keepalive": True,
        }  # fmt: skip
    for folder in ("queue", "control"):
        (broker_dir / folder).mkdir(parents=True, exist_ok=True)
    return "filesystem://localhost//", "ladder.common.broker:Transport", {
        "data_folder_in": str(broker_dir / "queue"),
        "data_folder_out": str(broker_dir / "queue"),
        "control_folder": str(broker_dir / "control"),
        # A listdir per poll: cheap, and a free worker waits at most this long for work.
        "polling_interval": 0.05,
    }  # fmt: skip


CELERY_BROKER_URL, CELERY_BROKER_TRANSPORT, CELERY_BROKER_TRANSPORT_OPTIONS = celery_broker(
    os.environ, LADDER_BROKER_DIR, LADDER_MATCH_HARD_LIMIT_S
)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True  # the match row is the result; no result backend
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Take a message only when a pool process is free (Redis): a worker killed with
# kill -9 holds no matches it never started, whose messages would sit unacknowledged
# until the visibility timeout (ignored, with a warning, by the embedded broker).
CELERY_WORKER_DISABLE_PREFETCH = CELERY_BROKER_TRANSPORT is None  # i.e. Redis
# A publish while the broker is away fails fast: the request still answers (the match
# is stored queued; the janitor sends it again), it does not hang on retries.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5,
}  # fmt: skip
CELERY_BROKER_CONNECTION_TIMEOUT = 3
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# KiB; a backstop against slow leaks in long-lived children.
CELERY_WORKER_MAX_MEMORY_PER_CHILD = 512 * 1024
CELERY_TASK_DEFAULT_QUEUE = "ladder"
CELERY_TASK_QUEUES: dict[str, dict[str, Any]] = {LADDER_MATCH_QUEUE: {}, "ladder": {}}
# Smoke matches are matches too: they need a worker that can start the sandbox.
CELERY_TASK_ROUTES = {
    LADDER_TASK_PLAY_MATCH: {"queue": LADDER_MATCH_QUEUE},
    LADDER_TASK_SMOKE_VERSION: {"queue": LADDER_MATCH_QUEUE},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "janitor": {
        "task": LADDER_TASK_JANITOR,
        "schedule": LADDER_JANITOR_INTERVAL_S,
        # A janitor message that waited a whole interval is superseded by the next one.
        "options": {"expires": LADDER_JANITOR_INTERVAL_S},
    },
}
if LADDER_MATCHMAKER_TARGET > 0:
    CELERY_BEAT_SCHEDULE["matchmake"] = {
        "task": LADDER_TASK_MATCHMAKE,
        "schedule": LADDER_MATCHMAKER_INTERVAL_S,
        # A tick that waited a whole interval is superseded by the next one.
        "options": {"expires": LADDER_MATCHMAKER_INTERVAL_S},
    }

# --- REST API -----------------------------------------------------------------
REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "ladder.api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_THROTTLE_CLASSES": [
        "ladder.api.throttling.AnonThrottle",
        "ladder.api.throttling.UserThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("LADDER_THROTTLE_ANON", "60/min"),
        "user": os.environ.get("LADDER_THROTTLE_USER", "600/min"),
        "exports": os.environ.get("LADDER_EXPORT_THROTTLE", "20/hour"),
    },
    # Trusted proxies: 0 = the client address is the socket's peer (never X-Forwarded-For).
    "NUM_PROXIES": int(os.environ.get("LADDER_NUM_PROXIES", "0")),
    "DEFAULT_PAGINATION_CLASS": "ladder.common.pagination.PagePagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "ladder.common.schema.AutoSchema",
    "EXCEPTION_HANDLER": "ladder.api.errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "ladder.api.parsers.BoundedJSONParser",  # deep nesting is a 400
        "rest_framework.parsers.FormParser",
        "ladder.api.parsers.StrictMultiPartParser",  # a garbled body is a 400
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
}
if DEBUG:
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"].append(
        "rest_framework.renderers.BrowsableAPIRenderer"
    )

SPECTACULAR_SETTINGS = {
    "TITLE": "Digging Down Ladder API",
    "DESCRIPTION": "Bots, versions, matches, ratings and replays of the Digging Down ladder.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # <id:...> path parameters (ladder.common.converters): 0 .. 2^63-1.
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1},
    },
    # Statuses every operation can answer (401, 429, 400, 404), documented once.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "ladder.common.schema.document_common_errors",
    ],
    # Two different "kind" choice sets (a bot's, a version's) and two "status" sets (a
    # version's, a match's).
    "ENUM_NAME_OVERRIDES": {
        "BotKindEnum": "ladder.bots.models.Bot.Kind",
        "VersionKindEnum": ["source", "endpoint"],
        "VersionStatusEnum": "ladder.bots.models.BotVersion.Status",
        "MatchStatusEnum": "ladder.matches.models.Match.Status",
    },
}

# --- web pages ------------------------------------------------------------------
LOGIN_URL = "web:login"
LOGIN_REDIRECT_URL = "web:dashboard"
LOGOUT_REDIRECT_URL = "web:leaderboard"
CSRF_FAILURE_VIEW = "ladder.web.errors.csrf_failure"

# Throttles and failure counts live in the cache: shared by every process only when the
# cache is (web workers, grpcserver); the memory default is for one process.
CACHES = {
    "default": (
        {
            # Answers as an empty cache while Redis is away (limits fail open, logged).
            "BACKEND": "ladder.common.cache.DegradingRedisCache",
            "LOCATION": _cache_url,
            # A cut-off Redis must cost a request a moment, not the client's patience.
            "OPTIONS": {"socket_connect_timeout": 1.0, "socket_timeout": 1.0},
            # Keeps apart deployments (or test runs) that share one Redis database.
            "KEY_PREFIX": os.environ.get("LADDER_CACHE_PREFIX", ""),
        }
        if (_cache_url := os.environ.get("LADDER_CACHE_URL"))
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Anonymous leaderboard and bot pages are kept this long in the shared cache (a recorded
# match invalidates them at once; this bounds what else may go stale). Off without a
# shared cache: a per-process cache would be invalidated in one process only.
LADDER_PAGE_CACHE_SECONDS = (
    int(os.environ.get("LADDER_PAGE_CACHE_SECONDS", "30")) if _cache_url else 0
)

# --- logging -------------------------------------------------------------------
# Explicit for production too: without it, DJANGO_DEBUG=0 sends a 500's traceback only
# to (unconfigured) admin mail, i.e. nowhere. Everything goes to stderr, one format,
# with the request id (ladder.common.request_id) that the client also gets.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "ladder.common.request_id.RequestIdFilter"},
        "client_error": {"()": "ladder.common.log_filters.ClientErrorWithoutTraceback"},
        "context": {"()": "telemetry.logs.ContextFilter"},  # match_id, worker
    },
    "formatters": {
        "line": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"},
        "json": {"()": "telemetry.logs.LineJsonFormatter"},
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "filters": ["request_id", "context"],
            # LADDER_LOG_FORMAT=json: one JSON object per line, for a log pipeline.
            "formatter": "json" if os.environ.get("LADDER_LOG_FORMAT") == "json" else "line",
        }
    },
    # Management commands' --log-level sets this root level (digdown.serving).
    "root": {"handlers": ["stderr"], "level": os.environ.get("LADDER_LOG_LEVEL", "INFO")},
    "loggers": {
        # Listed to drop Django's own handlers (console only when DEBUG, admin mail):
        # everything goes to stderr once. django.request: 5xx with traceback, 4xx.
        "django": {"level": "INFO"},
        "django.server": {"level": "INFO", "propagate": True},
        # A 403 (an admin page without the permission) is a warning, not a traceback.
        "django.request": {"level": "INFO", "filters": ["client_error"], "propagate": True},
    },
}

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

# --- notify: telling authors by e-mail and signed webhooks (docs/notifications.md) -------
INSTALLED_APPS.append("ladder.notifications")
# The site's public address: messages read outside the site (e-mail, webhooks) link to it.
LADDER_SITE_URL = os.environ.get("LADDER_SITE_URL", "http://127.0.0.1:8000")
# Django's e-mail framework. Without EMAIL_HOST (development) e-mails are written to the
# worker's output instead of sent; EMAIL_BACKEND overrides either choice.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = float(os.environ.get("EMAIL_TIMEOUT", "10"))
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Digging Down Ladder <ladder@localhost>")
SERVER_EMAIL = os.environ.get("SERVER_EMAIL", DEFAULT_FROM_EMAIL)
LADDER_TASK_NOTIFY = "workers.notify"
LADDER_TASK_NOTIFY_SWEEP = "workers.notify_sweep"
# One attempt's deadline (SMTP or the webhook's answer); attempts of one message; the
# first retry's delay (doubled each retry, at most LADDER_NOTIFY_RETRY_MAX_S; jittered).
LADDER_NOTIFY_TIMEOUT_S = float(os.environ.get("LADDER_NOTIFY_TIMEOUT_S", "10"))
LADDER_NOTIFY_MAX_ATTEMPTS = int(os.environ.get("LADDER_NOTIFY_MAX_ATTEMPTS", "8"))
LADDER_NOTIFY_RETRY_BACKOFF_S = max(1, int(os.environ.get("LADDER_NOTIFY_RETRY_BACKOFF_S", "30")))
LADDER_NOTIFY_RETRY_MAX_S = int(os.environ.get("LADDER_NOTIFY_RETRY_MAX_S", "3600"))
LADDER_NOTIFY_RETRY_JITTER = env_bool("LADDER_NOTIFY_RETRY_JITTER", True)
# How often beat sends again the messages of deliveries still owed after
# LADDER_QUEUED_GRACE_S (lost with the broker, or their worker died).
LADDER_NOTIFY_SWEEP_S = float(os.environ.get("LADDER_NOTIFY_SWEEP_S", "120"))
# A connected bot refused again for the same reason is told at most once per this long.
LADDER_NOTIFY_REFUSED_QUIET_S = int(os.environ.get("LADDER_NOTIFY_REFUSED_QUIET_S", "3600"))
CELERY_BEAT_SCHEDULE["notify-sweep"] = {
    "task": LADDER_TASK_NOTIFY_SWEEP,
    "schedule": LADDER_NOTIFY_SWEEP_S,
    "options": {"expires": LADDER_NOTIFY_SWEEP_S},
}
# The notifications' "kind" and "status" choice sets, named apart from the bots' and matches'.
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"] = {
    **SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"],  # type: ignore[dict-item]
    "NotificationKindEnum": "ladder.notifications.kinds.Kind",
    "DeliveryStatusEnum": "ladder.notifications.models.Delivery.Status",
}
# --- connect
# A worker about to play a match waits this long for each connected seat's stream (a bot
# reconnecting after a server restart); absent then, the match is void: nobody forfeits.
LADDER_CONNECT_SEAT_WAIT_S = float(os.environ.get("LADDER_CONNECT_SEAT_WAIT_S", "10"))
# New version labels a connected bot may name in 24 hours (each is a version row).
LADDER_CONNECT_NEW_VERSIONS_PER_DAY = int(
    os.environ.get("LADDER_CONNECT_NEW_VERSIONS_PER_DAY", "50")
)
# --- deploy
# Smoke matches: a start timeout may be the machine's; attempts before it counts (smoke.py).
LADDER_SMOKE_START_ATTEMPTS = max(1, int(os.environ.get("LADDER_SMOKE_START_ATTEMPTS", "3")))
# The last attempt's start limit is LADDER_SMOKE_START_ATTEMPTS times the limit.
LADDER_SMOKE_SOFT_LIMIT_S = round(
    LADDER_SANDBOX_START_S * LADDER_SMOKE_START_ATTEMPTS + LADDER_MATCH_BANK_S + 120
)
# The worker's liveness file for a healthcheck that starts no interpreter (broker_watch.py).
LADDER_WORKER_ALIVE_FILE = os.environ.get("LADDER_WORKER_ALIVE_FILE", "").strip()
# --- limits
# Query parameters and form fields longer than their limits are refused (400) before any
# view runs or any query is made (ladder.common.bounded); before CSRF, which reads forms.
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.csrf.CsrfViewMiddleware"),
    "ladder.common.bounded.BoundedFieldsMiddleware",
)
# The replay viewer's settings were documented above but never read from the environment
# (ladder/viewer read them with getattr defaults): an operator's value was ignored.
LADDER_VIEWER_UPLOAD_RATE = os.environ.get("LADDER_VIEWER_UPLOAD_RATE", "30/min")
LADDER_VIEWER_UPLOAD_MAX_BYTES = int(
    os.environ.get("LADDER_VIEWER_UPLOAD_MAX_BYTES", str(1024 * 1024))
)
LADDER_VIEWER_JSON_MAX_BYTES = int(
    os.environ.get("LADDER_VIEWER_JSON_MAX_BYTES", str(8 * 1024 * 1024))
)
LADDER_VIEWER_CACHE_SECONDS = int(os.environ.get("LADDER_VIEWER_CACHE_SECONDS", str(7 * 86400)))
# --- competitions
INSTALLED_APPS += ["ladder.competitions"]
LADDER_TASK_COMPETITIONS_TICK = "workers.competitions_tick"
LADDER_COMPETITION_TICK_S = float(os.environ.get("LADDER_COMPETITION_TICK_S", "10"))
LADDER_COMPETITION_RESAMPLES = int(os.environ.get("LADDER_COMPETITION_RESAMPLES", "400"))
LADDER_COMPETITION_MAX_GAMES = int(os.environ.get("LADDER_COMPETITION_MAX_GAMES", "20000"))
LADDER_QUOTA_PRIVATE_TOURNAMENTS_PER_DAY = int(
    os.environ.get("LADDER_QUOTA_PRIVATE_TOURNAMENTS_PER_DAY", "5")
)
LADDER_PRIORITY_PRIVATE = int(os.environ.get("LADDER_PRIORITY_PRIVATE", "3"))
CELERY_BEAT_SCHEDULE["competitions"] = {
    "task": LADDER_TASK_COMPETITIONS_TICK,
    "schedule": LADDER_COMPETITION_TICK_S,
    # A tick that waited a whole interval is superseded by the next one.
    "options": {"expires": LADDER_COMPETITION_TICK_S},
}
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]["CompetitionFormatEnum"] = [  # type: ignore[index]
    "round_robin",
    "swiss",
    "single_elimination",
    "double_elimination",
    "groups",
    "multi_stage",
]
# The tournaments' enum keeps the name it had before competitions brought a second "format".
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]["FormatEnum"] = (  # type: ignore[index]
    "ladder.tournaments.models.Tournament.Format"
)
# --- blame
# A connected seat whose stream the ladder lost waits this long for the bot to reconnect
# (then the decision is asked again; past it the match is released, nobody charged).
LADDER_CONNECT_RELAY_GRACE_S = float(os.environ.get("LADDER_CONNECT_RELAY_GRACE_S", "30"))
# A database outage (a PostgreSQL restart) answers 503 with Retry-After, not 500.
MIDDLEWARE.append("ladder.common.database_outage.DatabaseOutageMiddleware")
# A worker whose own infrastructure failed a match (cut off from the bots, no engine)
# claims nothing for this long: released matches land on a worker that can play them.
LADDER_WORKER_OWN_FAULT_COOLDOWN_S = float(
    os.environ.get("LADDER_WORKER_OWN_FAULT_COOLDOWN_S", "20")
)
