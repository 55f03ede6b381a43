"""URLs of the version-comparison API (under /api/v1/); tournaments are in ``matches.urls``."""

from django.urls import path

from ladder.tournaments import apis

urlpatterns = [
    path("comparisons/", apis.ComparisonListApi.as_view(), name="comparison-list"),
    path(
        "comparisons/<int:comparison_id>/",
        apis.ComparisonDetailApi.as_view(),
        name="comparison-detail",
    ),
]
