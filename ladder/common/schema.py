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
    """Every error body (``ladder.api.errors``)."""

    error = serializers.CharField()
    detail = serializers.CharField()


ERRORS = {
    400: OpenApiResponse(ErrorSerializer, "invalid input"),
    401: OpenApiResponse(ErrorSerializer, "missing or invalid token"),
    403: OpenApiResponse(ErrorSerializer, "not allowed"),
    404: OpenApiResponse(ErrorSerializer, "not found"),
    409: OpenApiResponse(ErrorSerializer, "state conflict"),
}
