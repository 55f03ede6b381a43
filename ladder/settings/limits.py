"""What one user or address may do: uploads, quotas, throttles, sign-ups, bot endpoints."""

from __future__ import annotations

from ladder.settings.core import DEBUG
from ladder.settings.environment import Environment

env = Environment("limits and quotas")

LADDER_DEV_MODE = env.flag(
    "LADDER_DEV_MODE", DEBUG, shown="DJANGO_DEBUG", why="allows loopback bot endpoints"
)
LADDER_ENDPOINT_ALLOWED_NETWORKS = env.items(
    "LADDER_ENDPOINT_ALLOWED_NETWORKS",
    why="CIDRs a remote bot's endpoint may be in besides public addresses",
)
LADDER_UPLOAD_MAX_BYTES = env.integer(
    "LADDER_UPLOAD_MAX_BYTES", 1024 * 1024, unit="bytes", why="one uploaded bot archive"
)
LADDER_UPLOAD_MAX_UNPACKED_BYTES = env.integer(
    "LADDER_UPLOAD_MAX_UNPACKED_BYTES", 8 * 1024 * 1024, unit="bytes", why="its files unpacked"
)
LADDER_UPLOAD_MAX_FILES = env.integer(
    "LADDER_UPLOAD_MAX_FILES", 200, unit="files", why="files in one uploaded archive"
)
LADDER_REPLAY_MAX_BYTES = env.integer(
    "LADDER_REPLAY_MAX_BYTES", 32 * 1024 * 1024, unit="bytes", why="one stored replay"
)
# Multipart uploads above this size go to a temp file instead of memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = LADDER_UPLOAD_MAX_BYTES + 64 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
LADDER_GRPC_THROTTLE = env.text(
    "LADDER_GRPC_THROTTLE", "600/min", why="gRPC calls per token (anonymous: per address)"
)
LADDER_THROTTLE_ANON = env.text("LADDER_THROTTLE_ANON", "60/min", why="REST calls per address")
LADDER_THROTTLE_USER = env.text("LADDER_THROTTLE_USER", "600/min", why="REST calls per user")
LADDER_EXPORT_THROTTLE = env.text(
    "LADDER_EXPORT_THROTTLE", "20/hour", why="REST game exports per user"
)
LADDER_NUM_PROXIES = env.integer(
    "LADDER_NUM_PROXIES",
    0,
    why="trusted reverse proxies in front of web and gRPC (0: the client address is the "
    "socket's peer; X-Forwarded-For is read only when above 0)",
)
LADDER_AUTH_FAILURES_PER_ADDRESS = env.text(
    "LADDER_AUTH_FAILURES_PER_ADDRESS", "30/15min", why="failed authentications per address"
)
LADDER_AUTH_FAILURES_PER_ACCOUNT = env.text(
    "LADDER_AUTH_FAILURES_PER_ACCOUNT", "10/15min", why="failed password sign-ins per account"
)
LADDER_SIGNUP = env.flag(
    "LADDER_SIGNUP",
    True,
    why="self sign-up on the site; 0 for a private ladder (staff make accounts)",
)
LADDER_SIGNUPS_PER_ADDRESS = env.text(
    "LADDER_SIGNUPS_PER_ADDRESS", "5/hour", why="new accounts per client address (off: none)"
)
# Per-user quotas (docs/operations.md); 0 is unlimited; staff are exempt.
LADDER_QUOTA_BOTS_PER_USER = env.integer(
    "LADDER_QUOTA_BOTS_PER_USER", 20, unit="bots", why="bots one user may own (0: unlimited)"
)
LADDER_QUOTA_VERSIONS_PER_BOT = env.integer(
    "LADDER_QUOTA_VERSIONS_PER_BOT",
    20,
    unit="versions",
    why="versions stored per bot; older ones no open match pins are pruned",
)
LADDER_QUOTA_BYTES_PER_USER = env.integer(
    "LADDER_QUOTA_BYTES_PER_USER", 100 * 1024 * 1024, unit="bytes", why="uploads one user keeps"
)
LADDER_QUOTA_OPEN_CHALLENGES = env.integer(
    "LADDER_QUOTA_OPEN_CHALLENGES", 10, unit="matches", why="a user's challenges not yet played"
)
LADDER_QUOTA_CHALLENGES_PER_DAY = env.integer(
    "LADDER_QUOTA_CHALLENGES_PER_DAY", 200, unit="matches", why="challenges a user makes a day"
)
LADDER_QUOTA_COMPARISONS_PER_DAY = env.integer(
    "LADDER_QUOTA_COMPARISONS_PER_DAY", 20, why="version comparisons a user starts a day"
)
# Version comparisons (docs/tournaments.md): deals per comparison, and how many a user
# may have being played at once (each deal is seats matches per version).
LADDER_COMPARISON_MAX_DEALS = env.integer(
    "LADDER_COMPARISON_MAX_DEALS", 50, unit="deals", why="deals one version comparison may ask for"
)
LADDER_COMPARISONS_OPEN_PER_USER = env.integer(
    "LADDER_COMPARISONS_OPEN_PER_USER", 2, why="comparisons a user may have being played at once"
)
