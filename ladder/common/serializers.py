"""Input serializers that take JSON at its word.

DRF coerces: ``{"name": 0}`` becomes the name ``"0"``, ``{"rated": "yes"}`` becomes
``True``, ``{"bots": ["1", "2"]}`` becomes ids. The published OpenAPI schema says a
string is a string and an integer an integer, and a client that sends the wrong
type has a bug it should hear about (400), not a guess. Form and query data
(``QueryDict``) carry only strings, so there DRF's parsing stays as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import QueryDict
from rest_framework import serializers


def _json_type_problem(field: serializers.Field, value: Any) -> str | None:
    """Why ``value`` (decoded JSON) is not of the type ``field`` documents, or None."""
    if value is None:
        return None  # allow_null decides
    if isinstance(field, serializers.BooleanField):
        return None if isinstance(value, bool) else "must be a JSON boolean"
    if isinstance(field, serializers.IntegerField):
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else "must be a JSON integer"
    if isinstance(field, serializers.ChoiceField | serializers.CharField):
        return None if isinstance(value, str) else "must be a JSON string"
    if isinstance(field, serializers.ListField):
        if not isinstance(value, list):
            return "must be a JSON array"
        for item in value:
            problem = _json_type_problem(field.child, item)
            if problem:
                return f"every item {problem}"
    return None


class StrictInputSerializer(serializers.Serializer):
    """A serializer for request bodies: JSON values must have the documented type."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping) and not isinstance(data, QueryDict):
            errors = {
                name: [problem]
                for name, field in self.fields.items()
                if not field.read_only
                and name in data
                and (problem := _json_type_problem(field, data[name]))
            }
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)
