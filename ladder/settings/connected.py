"""Connected bots (docs/connected-bots.md): presence, the relay, and the Play stream's limits."""

from __future__ import annotations

from ladder.settings.environment import Environment
from ladder.settings.services import CACHE_URL, REDIS_URL

env = Environment("connected bots")

LADDER_PRESENCE_URL = env.text(
    "LADDER_PRESENCE_URL",
    REDIS_URL or CACHE_URL,
    shown="REDIS_URL, else LADDER_CACHE_URL",
    why="Redis where every grpcserver records the connected bots' open streams (unset: in "
    "the database, for the processes sharing it)",
)
LADDER_PRESENCE_PREFIX = env.text(
    "LADDER_PRESENCE_PREFIX", "dd:", why="key prefix of those records"
)
LADDER_RELAY_LISTEN = env.text(
    "LADDER_RELAY_LISTEN",
    "127.0.0.1:0",
    why="internal address each grpcserver serves the workers' relay on (never for authors)",
)
LADDER_RELAY_ADVERTISE = env.text(
    "LADDER_RELAY_ADVERTISE", "", shown="(the bound address)", why="the relay address workers dial"
)
LADDER_CONNECT_STREAMS_PER_BOT = env.integer(
    "LADDER_CONNECT_STREAMS_PER_BOT", 4, unit="streams", why="open Play streams of one bot"
)
LADDER_CONNECT_STREAMS_PER_USER = env.integer(
    "LADDER_CONNECT_STREAMS_PER_USER", 16, unit="streams", why="over all of one user's bots"
)
LADDER_CONNECT_STREAMS_PER_PROCESS = env.integer(
    "LADDER_CONNECT_STREAMS_PER_PROCESS",
    10_000,
    unit="streams",
    why="held by one grpcserver process (a descriptor each: see its open-files limit)",
)
LADDER_CONNECT_MESSAGES_PER_S = env.integer(
    "LADDER_CONNECT_MESSAGES_PER_S",
    50,
    unit="messages/s",
    why="messages a bot sends of its own accord (bursts of twice this)",
)
LADDER_CONNECT_MAX_MESSAGE_BYTES = env.integer(
    "LADDER_CONNECT_MAX_MESSAGE_BYTES", 256 * 1024, unit="bytes", why="one message from a bot"
)
LADDER_CONNECT_PING_INTERVAL_S = env.number(
    "LADDER_CONNECT_PING_INTERVAL_S", 10, unit="s", why="the server pings each stream this often"
)
LADDER_CONNECT_PING_TIMEOUT_S = env.number(
    "LADDER_CONNECT_PING_TIMEOUT_S", 20, unit="s", why="a ping unanswered this long closes it"
)
LADDER_CONNECT_SEAT_WAIT_S = env.number(
    "LADDER_CONNECT_SEAT_WAIT_S",
    30,
    unit="s",
    why="a worker about to play a match waits this long for each connected seat's stream (a "
    "bot reconnecting after a server restart, as long as the relay's grace); absent then, "
    "the match is void: no forfeit",
)
LADDER_CONNECT_NEW_VERSIONS_PER_DAY = env.integer(
    "LADDER_CONNECT_NEW_VERSIONS_PER_DAY",
    50,
    unit="versions",
    why="new version labels a connected bot may name in 24 hours (each is a version row)",
)
LADDER_CONNECT_RELAY_GRACE_S = env.number(
    "LADDER_CONNECT_RELAY_GRACE_S",
    30,
    unit="s",
    why="a connected seat whose stream the ladder lost (its grpcserver stopped or cut off) "
    "waits this long for the bot to reconnect (covers a restart), then the match is released, "
    "nobody charged",
)
