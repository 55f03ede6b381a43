"""Remote-bot endpoint validation against SSRF, with a fake resolver playing DNS."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.common.ssrf_check import EndpointRejected, endpoint_check, parse_endpoint


def resolver_of(table: dict[str, list[str]]) -> Any:
    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError("Name or service not known")
        return table[host]

    return resolve


DNS = resolver_of(
    {
        "bot.example.com": ["93.184.216.34"],
        "dual.example.com": ["93.184.216.34", "10.0.0.5"],
        "rebind.example.com": ["169.254.169.254"],
        "v6.example.com": ["2606:4700::1111"],
        "mapped.example.com": ["::ffff:127.0.0.1"],
    }
)

REJECTED = [
    "127.0.0.1:50051",
    "[::1]:50051",
    "localhost:50051",
    "127.1.2.3:50051",
    "10.1.2.3:50051",
    "172.16.0.1:50051",
    "192.168.1.1:50051",
    "100.64.0.1:50051",
    "169.254.169.254:80",
    "0.0.0.0:50051",
    "[::ffff:127.0.0.1]:50051",
    "[fe80::1]:50051",
    "[fc00::1]:50051",
    "224.0.0.1:50051",
    "dual.example.com:50051",
    "rebind.example.com:80",
    "mapped.example.com:50051",
    "nowhere.example.com:50051",
    "bot.example.com",
    "bot.example.com:0",
    "bot.example.com:70000",
    "http://bot.example.com:80/path",
    "user@bot.example.com:80",
]


@pytest.mark.parametrize("endpoint", REJECTED)
def test_rejected(endpoint: str, settings: Any) -> None:
    settings.LADDER_DEV_MODE = False
    with pytest.raises(EndpointRejected) as exc:
        endpoint_check(endpoint, resolver=DNS)
    assert exc.value.message


@pytest.mark.parametrize(
    "endpoint, target",
    [
        ("bot.example.com:50051", "bot.example.com:50051"),
        ("grpc://BOT.example.com.:443", "bot.example.com:443"),
        ("v6.example.com:50051", "v6.example.com:50051"),
        ("[2606:4700::1111]:50051", "[2606:4700::1111]:50051"),
        ("8.8.8.8:50051", "8.8.8.8:50051"),
    ],
)
def test_accepted(endpoint: str, target: str, settings: Any) -> None:
    settings.LADDER_DEV_MODE = False
    assert endpoint_check(endpoint, resolver=DNS).target == target


def test_loopback_only_in_dev_mode(settings: Any) -> None:
    settings.LADDER_DEV_MODE = True
    assert endpoint_check("127.0.0.1:50051").addresses == ("127.0.0.1",)
    assert endpoint_check("localhost:50051", resolver=resolver_of({"localhost": ["127.0.0.1"]}))
    with pytest.raises(EndpointRejected, match="link-local"):
        endpoint_check("169.254.169.254:80")
    with pytest.raises(EndpointRejected, match="private"):
        endpoint_check("10.0.0.1:80")


def test_allowed_networks_setting(settings: Any) -> None:
    settings.LADDER_DEV_MODE = False
    settings.LADDER_ENDPOINT_ALLOWED_NETWORKS = ["10.20.0.0/16"]
    assert endpoint_check("10.20.3.4:50051")
    with pytest.raises(EndpointRejected):
        endpoint_check("10.21.3.4:50051")


def test_hex_encoded_loopback_is_resolved_then_rejected(settings: Any) -> None:
    settings.LADDER_DEV_MODE = False
    # The system resolver (inet_aton) turns 0x7f000001 into 127.0.0.1.
    with pytest.raises(EndpointRejected):
        endpoint_check("0x7f000001:50051")


def test_parse() -> None:
    assert parse_endpoint("[::1]:5") == ("::1", 5)
    with pytest.raises(EndpointRejected, match="host:port"):
        parse_endpoint("::1:5")


@pytest.mark.django_db
def test_service_stores_nothing_on_rejection(make_user: Any) -> None:
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_create, bot_set_endpoint

    owner = make_user("alice")
    bot = bot_create(owner=owner, name="far-away", kind="remote")
    with pytest.raises(EndpointRejected):
        bot_set_endpoint(user=owner, bot_id=bot.pk, endpoint="169.254.169.254:80")
    assert not BotVersion.objects.exists()
    v = bot_set_endpoint(user=owner, bot_id=bot.pk, endpoint="bot.example.com:1", resolver=DNS)
    assert v.number == 1 and v.endpoint == "bot.example.com:1"


@pytest.mark.django_db
def test_recheck_at_connect_time_catches_rebinding(make_user: Any) -> None:
    """Public at registration, private at match time: the re-check the runner does refuses it."""
    from ladder.bots.services import bot_create, bot_set_endpoint

    owner = make_user("alice")
    bot = bot_create(owner=owner, name="rebinder", kind="remote")
    public = resolver_of({"flip.example.com": ["93.184.216.34"]})
    version = bot_set_endpoint(
        user=owner, bot_id=bot.pk, endpoint="flip.example.com:50051", resolver=public
    )
    private = resolver_of({"flip.example.com": ["10.0.0.7"]})
    with pytest.raises(EndpointRejected, match="private"):
        endpoint_check(version.endpoint, resolver=private)
