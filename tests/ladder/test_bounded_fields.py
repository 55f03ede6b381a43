"""Every text field of every entry is checked against its limit before any query.

A 1 MiB bot name answered INTERNAL on SQLite ("LIKE or GLOB pattern too
complex") from ``ListMatches``, ``RequestChallenge``, ``ReactivateBot`` and
``CompareVersions``. This walks every method of the Ladder gRPC service and
sets each of its request's string fields in turn to 1 MiB: the answer is
INVALID_ARGUMENT naming the field. Then every operation of the REST API's
schema: each string query parameter and each string field of a JSON body in
turn: the answer is 400 (or 413 for a body past the parser's own limit). A new
method or endpoint is walked without anyone listing it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from google.protobuf import message_factory
from google.protobuf.descriptor import FieldDescriptor

from digdown.v1 import ladder_pb2 as pb
from digdown.v1 import ladder_pb2_grpc
from ladder.accounts.models import User
from ladder.accounts.services import token_create
from ladder.grpc.server import LadderServer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite_too,
              pytest.mark.timeout(300)]  # fmt: skip

HUGE = "a" * (1024 * 1024)
T = 30.0


@pytest.fixture
def world(make_user: Any, make_bot: Any) -> dict[str, Any]:
    owner = make_user("bounded", staff=False)
    make_bot(owner, "bounded-a")
    make_bot(make_user("other"), "bounded-b")
    return {"token": token_create(user=owner, name="t").secret, "owner": owner}


def _string_fields(descriptor: Any) -> Iterator[Any]:
    for field in descriptor.fields:
        if field.type == FieldDescriptor.TYPE_STRING:
            yield field


def test_every_grpc_method_refuses_an_oversized_text_field(world: dict[str, Any]) -> None:
    service = pb.DESCRIPTOR.services_by_name["Ladder"]
    server = LadderServer("127.0.0.1:0", max_workers=2, rate="0")
    server.start()
    walked, answers = 0, {}
    try:
        with grpc.insecure_channel(
            server.address, options=[("grpc.max_send_message_length", 8 << 20)]
        ) as channel:
            stub = ladder_pb2_grpc.LadderStub(channel)
            auth = [("authorization", f"Bearer {world['token']}")]
            for method in service.methods:
                if method.client_streaming:
                    continue  # Play: its messages are sized by its own decoder
                for field in _string_fields(method.input_type):
                    request = message_factory.GetMessageClass(method.input_type)()
                    if field.is_repeated:
                        getattr(request, field.name).append(HUGE)
                    else:
                        setattr(request, field.name, HUGE)
                    rpc = getattr(stub, method.name)
                    try:
                        if method.server_streaming:
                            list(rpc(request, metadata=auth, timeout=T))
                        else:
                            rpc(request, metadata=auth, timeout=T)
                        code, details = grpc.StatusCode.OK, ""
                    except grpc.RpcError as exc:
                        code, details = exc.code(), exc.details() or ""
                    answers[f"{method.name}.{field.name}"] = code.name
                    assert code == grpc.StatusCode.INVALID_ARGUMENT, (
                        f"{method.name}({field.name}=1 MiB) -> {code.name}: {details[:200]}"
                    )
                    assert field.name in details and "at most" in details, details
                    walked += 1
    finally:
        server.stop(1.0)
    # Every method that takes a bot name is among them.
    for name in ("ListMatches.bot", "RequestChallenge.bot", "RequestChallenge.opponents",
                 "ReactivateBot.bot", "CompareVersions.bot", "UploadVersion.bot"):  # fmt: skip
        assert name in answers, sorted(answers)
    assert walked >= 20, walked


def _operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def _fill(path: str) -> str:
    """Path parameters (ids) filled with 1: the field check comes before any lookup."""
    out, rest = "", path
    while "{" in rest:
        head, _, tail = rest.partition("{")
        out += head + "1"
        rest = tail.partition("}")[2]
    return out + rest


def _json_strings(schema: dict[str, Any], components: dict[str, Any]) -> list[str]:
    if "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    return [
        name
        for name, prop in (schema.get("properties") or {}).items()
        if prop.get("type") == "string"
        and not prop.get("readOnly")
        and prop.get("format") != "binary"
    ]


def test_every_rest_operation_refuses_an_oversized_text_field(world: dict[str, Any]) -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    # As staff: every operation reaches its input checks (none refuses for permission).
    staff = User.objects.create_user(username="bounded-staff", password="pw-1234567", is_staff=True)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=staff, name='s').secret}")
    walked: list[str] = []
    for path, method, operation in _operations():
        url = _fill(path)
        for parameter in operation.get("parameters") or []:
            if parameter.get("in") != "query" or parameter["schema"].get("type") != "string":
                continue
            response = getattr(client, method)(url, {parameter["name"]: HUGE})
            assert response.status_code == 400, (
                f"{method.upper()} {path}?{parameter['name']}=1 MiB -> {response.status_code}:"
                f" {response.content[:200]!r}"
            )
            walked.append(f"{method.upper()} {path}?{parameter['name']}")
        body = (operation.get("requestBody") or {}).get("content", {}).get("application/json")
        if body is None:
            continue
        for name in _json_strings(body["schema"], components):
            response = getattr(client, method)(url, {name: HUGE}, content_type="application/json")
            assert response.status_code in (400, 413), (
                f"{method.upper()} {path} {{{name}: 1 MiB}} -> {response.status_code}:"
                f" {response.content[:200]!r}"
            )
            walked.append(f"{method.upper()} {path} {name}")
    assert any("/exports/games/?bot" in w for w in walked), walked
    assert any(w.startswith("POST /api/v1/bots/ name") for w in walked), walked
    assert len(walked) >= 10, walked


@pytest.mark.parametrize(
    "url",
    ["/?q=", "/?ladder=", "/now/?ladder=", "/tournaments/?page=", "/accounts/login/?next="],
)
def test_site_pages_refuse_an_oversized_query(url: str) -> None:
    response = Client().get(url + HUGE)
    assert response.status_code == 400, (url, response.status_code)
