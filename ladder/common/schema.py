"""OpenAPI plumbing shared by every app's ``apis.py``.

Every API class nests its own ``InputSerializer``/``OutputSerializer``/
``FilterSerializer`` (HackSoft style); ``AutoSchema`` names each after its API
(``BotListApi.InputSerializer`` -> component ``BotListInput``), so the names are
unique without registering them one by one.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class AutoSchema(SpectacularAutoSchema):
    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        qualname = type(serializer).__qualname__
        owner, _, name = qualname.rpartition(".")
        if not owner or "<locals>" in qualname:
            return type(serializer).__name__
        return owner.removesuffix("Api") + name


class ErrorSerializer(serializers.Serializer):
    """Every error body (``ladder.common.rest_errors``)."""

    error = serializers.CharField()
    detail = serializers.CharField()


ERRORS = {
    400: OpenApiResponse(ErrorSerializer, "invalid input"),
    401: OpenApiResponse(ErrorSerializer, "missing or invalid token"),
    403: OpenApiResponse(ErrorSerializer, "not allowed"),
    404: OpenApiResponse(ErrorSerializer, "not found"),
    409: OpenApiResponse(ErrorSerializer, "state conflict"),
}


def _error_response(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _empty_means_absent(param: dict[str, Any]) -> None:
    """DRF reads an empty query value (``?ladder=``, ``?page=``) as a parameter not given:
    say so. A text parameter loses ``minLength``; any other gains the empty string."""
    schema = param.get("schema", {})
    if schema.get("type") == "string" and not {"enum", "format"} & schema.keys():
        if schema.pop("minLength", None) and "pattern" not in schema:
            schema["pattern"] = f"^$|{NOT_ONLY_BLANKS}"  # DRF trims: blanks alone are empty
    elif schema:
        default = schema.pop("default", None)
        param["schema"] = {"anyOf": [schema, {"type": "string", "enum": [""]}]}
        if default is not None:
            param["schema"]["default"] = default
    else:
        return
    note = "empty: as if not given"
    param["description"] = f"{param['description']} ({note})" if param.get("description") else note


# A character Python's str.strip() (DRF's trim) keeps: anything but its whitespace.
NOT_ONLY_BLANKS = (
    "[^\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000]"
)


# Text without NUL: Django and DRF refuse a NUL character in every text input (400), as
# PostgreSQL cannot store one. The patterns say so, so a schema-valid request has none.
NO_NUL = "^[^\\x00]*$"
NOT_ONLY_BLANKS_NO_NUL = "^[^\\x00]*" + NOT_ONLY_BLANKS.replace("[^", "[^\\x00", 1) + "[^\\x00]*$"


def _no_nul(schema: dict[str, Any]) -> None:
    """A free text input gets the pattern that says it has no NUL (and, when it must not
    be empty, more than blanks)."""
    if schema.get("type") != "string" or {"format", "enum"} & schema.keys():
        return
    pattern = schema.get("pattern")
    if pattern is None:
        schema["pattern"] = NO_NUL
    elif pattern == NOT_ONLY_BLANKS:
        schema["pattern"] = NOT_ONLY_BLANKS_NO_NUL
    elif pattern == f"^$|{NOT_ONLY_BLANKS}":
        schema["pattern"] = f"^$|{NOT_ONLY_BLANKS_NO_NUL}"


def _not_only_blanks(component: dict[str, Any]) -> None:
    """A required text input (``minLength``) must hold more than blanks: DRF trims it first,
    so ``" "`` is as empty as ``""`` (400). The pattern says so. No text input holds NUL."""
    for prop in component.get("properties", {}).values():
        if (
            prop.get("type") == "string"
            and prop.get("minLength")
            and not {"pattern", "format", "enum"} & prop.keys()
        ):
            prop["pattern"] = NOT_ONLY_BLANKS
        _no_nul(prop)


def _patch_changes_something(operation: dict[str, Any], schemas: dict[str, Any]) -> None:
    """A PATCH names at least one field (its views answer 400 to an empty one)."""
    if "requestBody" in operation:
        operation["requestBody"]["required"] = True
    for media in operation.get("requestBody", {}).get("content", {}).values():
        ref = media.get("schema", {}).get("$ref", "")
        component = schemas.get(ref.rpartition("/")[2])
        if component is not None:
            component["minProperties"] = 1


def document_common_errors(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: every status an operation can answer is in the schema.

    Some answers do not depend on the view, so no ``extend_schema`` names them:
    a wrong or revoked token or password is 401 and a client over its throttle or
    its failed-authentication limit is 429 on *every* operation; a write may be
    403 (a signed-in session without its CSRF token, or not the owner); an operation
    with query parameters or a body answers 400 for one it cannot use; one with
    path parameters, or a page number past the end, answers 404. Added here,
    once, where the view did not already document them (the error body is the
    ``Error`` component, ``ladder.common.rest_errors``).
    """
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault(
        "Error",
        {
            "type": "object",
            "properties": {"error": {"type": "string"}, "detail": {"type": "string"}},
            "required": ["error", "detail"],
        },
    )
    for name, component in schemas.items():
        if name.endswith("Request"):
            _not_only_blanks(component)
    for path, item in result.get("paths", {}).items():
        for method, operation in item.items():
            if method not in {"get", "put", "patch", "post", "delete"}:
                continue
            if method == "patch":
                _patch_changes_something(operation, schemas)
            params = operation.get("parameters", [])
            for param in params:
                if param.get("in") == "query":
                    _empty_means_absent(param)
                    _no_nul(param.get("schema", {}))
            responses = operation.setdefault("responses", {})
            wanted = {
                "401": "missing, wrong or revoked credentials",
                "429": "throttled, or too many failed authentications (see Retry-After)",
            }
            if any(p.get("in") == "query" for p in params) or "requestBody" in operation:
                wanted["400"] = "invalid input"
            if any(p.get("in") == "query" for p in params):
                # gunicorn's limit_request_line (ladder/gunicorn.conf.py), before Django.
                wanted["414"] = "the request line is longer than the server accepts (4 KiB)"
            if method != "get":
                wanted["403"] = "not allowed (not the owner, not staff, or no CSRF token)"
            if "{" in path or any(p.get("name") == "page" for p in params):
                wanted["404"] = "not found (or a page past the end)"
            for status, description in wanted.items():
                if status == "414":  # gunicorn's own answer (HTML), not the API's error body
                    responses.setdefault(status, {"description": description})
                else:
                    responses.setdefault(status, _error_response(description))
    return result
