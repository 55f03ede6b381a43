"""The REST API (DRF) and its OpenAPI schema (drf-spectacular)."""

from __future__ import annotations

from typing import Any

from ladder.settings.core import DEBUG
from ladder.settings.limits import (
    LADDER_EXPORT_THROTTLE,
    LADDER_NUM_PROXIES,
    LADDER_THROTTLE_ANON,
    LADDER_THROTTLE_USER,
)

REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "ladder.accounts.rest_authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_THROTTLE_CLASSES": [
        "ladder.accounts.rest_throttling.AnonThrottle",
        "ladder.accounts.rest_throttling.UserThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": LADDER_THROTTLE_ANON,
        "user": LADDER_THROTTLE_USER,
        "exports": LADDER_EXPORT_THROTTLE,
    },
    # Trusted proxies: 0 = the client address is the socket's peer (never X-Forwarded-For).
    "NUM_PROXIES": LADDER_NUM_PROXIES,
    "DEFAULT_PAGINATION_CLASS": "ladder.common.pagination.PagePagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "ladder.common.schema.AutoSchema",
    "EXCEPTION_HANDLER": "ladder.common.rest_errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "ladder.common.rest_parsers.BoundedJSONParser",  # deep nesting is a 400
        "rest_framework.parsers.FormParser",
        "ladder.common.rest_parsers.StrictMultiPartParser",  # a garbled body is a 400
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
        # The notifications' "kind" and "status" choice sets, named apart from the others.
        "NotificationKindEnum": "ladder.notifications.kinds.Kind",
        "DeliveryStatusEnum": "ladder.notifications.models.Delivery.Status",
        "CompetitionFormatEnum": [
            "round_robin",
            "swiss",
            "single_elimination",
            "double_elimination",
            "groups",
            "multi_stage",
        ],
        # The tournaments' enum keeps the name it had before competitions brought a second
        # "format".
        "FormatEnum": "ladder.tournaments.models.Tournament.Format",
    },
}
