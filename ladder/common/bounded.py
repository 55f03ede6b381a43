"""Every bounded text field of a request checked against its limit before any query.

A 1 MiB bot name sent to ``ListMatches``, ``RequestChallenge``, ``ReactivateBot``
or ``CompareVersions`` reached a case-insensitive lookup and SQLite answered
"LIKE or GLOB pattern too complex" (an INTERNAL status); PostgreSQL said
NOT_FOUND after scanning for it. A name longer than any stored name names
nothing: it is refused as bad input (INVALID_ARGUMENT, HTTP 400) before the
database is asked.

One table says how long each kind of field may be (``LIMITS``, by field name,
from the models that store them); a field it does not name may be at most
``DEFAULT_MAX`` characters. The gRPC server checks every string field of every
request message (``CallGuard``, ``ladder.grpc.auth``); the REST API and the site
check every query parameter and form field the same way (``BoundedFieldsMiddleware``).
Uploaded files and ``bytes`` fields are bounded by their own size limits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

BOT_NAME = 32  # ladder.bots.models.Bot.name
USERNAME = 150  # django.contrib.auth's username
LADDER_KEY = 32
TOURNAMENT_NAME = 100
TEXT = 500  # descriptions, reasons
ENDPOINT = 300
PATH = 255  # file names, entry points
TOKEN = 512  # page tokens, API token secrets

# Field name (gRPC message field, REST query parameter or form field) -> characters.
LIMITS: dict[str, int] = {
    "bot": BOT_NAME,
    "bots": BOT_NAME,
    "opponents": BOT_NAME,
    "participants": BOT_NAME,
    "name": TOURNAMENT_NAME,  # bot names (32) are checked by their own rule after this
    "owner": USERNAME,
    "username": USERNAME,
    "ladder": LADDER_KEY,
    "kind": 16,
    "format": 32,  # tournament and competition formats ("double_elimination")
    "status": 16,
    "difficulty": 16,
    "ruleset": 16,
    "data_format": 16,
    "endpoint": ENDPOINT,
    "filename": PATH,
    "entry_point": PATH,
    "description": TEXT,
    "rules": 20000,  # a competition's rules in words (its serializer's max_length)
    "reason": TEXT,
    "search": 100,
    "q": 100,
    "page_token": TOKEN,
    "cursor": TOKEN,
    "password": 4096,
    "password1": 4096,
    "password2": 4096,
}
DEFAULT_MAX = 4096  # any other text field


class FieldTooLong(ValueError):
    """A request field longer than its limit (INVALID_ARGUMENT / 400)."""

    def __init__(self, field: str, limit: int, length: int) -> None:
        super().__init__(f"{field}: at most {limit} characters, got {length}")
        self.field, self.limit, self.length = field, limit, length


def limit_of(field: str) -> int:
    return LIMITS.get(field, DEFAULT_MAX)


def check_text(field: str, value: str) -> None:
    """Raise FieldTooLong when ``value`` is longer than ``field``'s limit."""
    limit = limit_of(field)
    if len(value) > limit:
        raise FieldTooLong(field, limit, len(value))


def _strings(message: Message, prefix: str = "") -> Iterator[tuple[str, str, str]]:
    """(path, field name, value) of every string set in ``message``, nested and repeated."""
    for field, value in message.ListFields():
        path = f"{prefix}{field.name}"
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            for k, v in value.items():  # a map: its keys and values as the field's
                for item in (k, v):
                    if isinstance(item, str):
                        yield path, field.name, item
                    elif isinstance(item, Message):
                        yield from _strings(item, f"{path}.")
            continue
        values: Iterable[Any] = value if field.is_repeated else [value]
        if field.type == FieldDescriptor.TYPE_STRING:
            for v in values:
                yield path, field.name, v
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            for v in values:
                yield from _strings(v, f"{path}.")


def check_message(message: Message) -> None:
    """Raise FieldTooLong for the first string field of ``message`` past its limit."""
    for path, name, value in _strings(message):
        limit = limit_of(name)
        if len(value) > limit:
            raise FieldTooLong(path, limit, len(value))


def check_request(request: HttpRequest) -> None:
    """Raise FieldTooLong for a query parameter past its limit, or a urlencoded form
    field past ``DEFAULT_MAX`` (a form's own fields have their ``max_length``, and a
    form may spell a list of names in one field). JSON bodies are checked by the API's
    serializers (every text field of them has its ``max_length``); files by the upload
    limits; multipart bodies are left to the parsers that bound them."""
    for name, values in request.GET.lists():
        check_text(name, name)  # a 1 MiB parameter name is as bad as a value
        for value in values:
            check_text(name, value)
    if request.method == "POST" and request.content_type == "application/x-www-form-urlencoded":
        for name, values in request.POST.lists():
            # A field the table allows more than the default (a competition's rules) keeps
            # its serializer's limit; no form field is held below the default here.
            limit = max(DEFAULT_MAX, limit_of(name))
            for value in [name, *values]:
                if len(value) > limit:
                    raise FieldTooLong(name[:64], limit, len(value))


class BoundedFieldsMiddleware:
    """Refuse (400) a request whose query or form field is longer than its limit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            check_request(request)
        except FieldTooLong as exc:
            return JsonResponse(
                {"error": "invalid", "detail": str(exc), "field": exc.field}, status=400
            )
        return self.get_response(request)
