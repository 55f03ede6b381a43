"""The site's URLs plus two views that fail, to see the 500 pages (HTML and API JSON)."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from ladder.urls import handler403, handler404, handler500
from ladder.urls import urlpatterns as site_urlpatterns


def boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("secret detail")


urlpatterns = [path("boom/", boom), path("api/boom/", boom), *site_urlpatterns]
__all__ = ["handler403", "handler404", "handler500", "urlpatterns"]
