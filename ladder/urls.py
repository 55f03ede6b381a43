"""Root URL map: admin, replay viewer, versioned REST API, OpenAPI schema and offline Swagger UI."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from ladder.api import errors

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("ladder.viewer.urls")),  # /replays/..., /api/v1/.../timeline/
    path("api/v1/", include("ladder.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
]

handler404 = errors.json_404
handler500 = errors.json_500
