"""Error pages in the site's style, and service errors turned into page answers.

The REST API keeps its JSON errors: a path under ``/api/`` gets the API's
handler, every other path an HTML page. With ``DJANGO_DEBUG=0`` these pages
never show a stack trace (Django logs it instead).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django import forms
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template import loader
from django.views.decorators.csrf import requires_csrf_token

from ladder.common import request_id
from ladder.common import rest_errors as api_errors
from ladder.common.exceptions import ApplicationError, NotFound, PermissionDenied


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def _message(exception: Exception | None) -> str:
    """A message a service or view chose to show (never a traceback)."""
    if exception is None or not exception.args or not isinstance(exception.args[0], str):
        return ""
    return exception.args[0]


@requires_csrf_token
def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return api_errors.json_404(request, exception)
    context = {"message": _message(exception)}
    return render(request, "404.html", context, status=404)


@requires_csrf_token
def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    context = {"message": _message(exception)}
    return render(request, "403.html", context, status=403)


@requires_csrf_token
def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return api_errors.json_500(request)
    # No context processors (they read the session and the user): the error may be there.
    # The request id leads an operator to the traceback in the log.
    page = loader.render_to_string("500.html", {"request_id": request_id.current()})
    return HttpResponse(page, status=500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A refused form post (stale page, cookies off): say so and how to go on."""
    return render(request, "403_csrf.html", status=403)


@contextmanager
def shown_on(form: forms.BaseForm) -> Iterator[None]:
    """Run a service call; its refusal becomes the form's error (the page is shown again).

    NotFound and PermissionDenied are not the form's business: they become the
    404 and 403 pages.
    """
    try:
        yield
    except NotFound as exc:
        raise Http404(exc.message) from exc
    except PermissionDenied as exc:
        raise DjangoPermissionDenied(exc.message) from exc
    except ApplicationError as exc:
        form.add_error(None, exc.message)
