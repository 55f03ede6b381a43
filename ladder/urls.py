"""Root URL map: site pages, replay viewer, admin, REST API, OpenAPI schema, Swagger UI,
Prometheus metrics."""

from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path, register_converter
from drf_spectacular.views import SpectacularSwaggerSplitView

from ladder.common.converters import IdConverter
from ladder.common.rest_schema_view import SchemaView
from ladder.web import errors
from ladder.web.metrics import metrics

# Before the apps' URL modules are imported (by include): they use <id:...>.
register_converter(IdConverter, "id")

urlpatterns = [
    path("metrics", metrics, name="metrics"),  # Prometheus; LADDER_METRICS_ALLOW only
    path("admin/", admin.site.urls),
    path("", include("ladder.viewer.urls")),  # /replays/..., /api/v1/.../timeline/
    path("api/v1/", include("ladder.rest_urls")),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path(
        "api/docs/",
        csp_update({"style-src": ["'unsafe-inline'"]})(  # Swagger UI adds <style> elements
            SpectacularSwaggerSplitView.as_view(url_name="schema")
        ),
        name="swagger-ui",
    ),
    path("", include("ladder.web.urls")),
]

# HTML pages in the site's style; paths under /api/ keep the API's JSON errors.
handler403 = errors.permission_denied
handler404 = errors.page_not_found
handler500 = errors.server_error
