"""The JSON API at /api/v1/, its OpenAPI 3.1 description generated from the code by django-ninja."""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe
from ninja import NinjaAPI
from ninja.errors import HttpError, ValidationError

from lessons.api import RateLimited
from lessons.api import router as lessons_router

api = NinjaAPI(
    title="LightMySky API",
    version="1",
    description=(
        "Free, read-only access to LightMySky's lessons and questions, and answer checking "
        "that stores nothing. No account and no key. Errors are JSON with a `detail` message."
    ),
    urls_namespace="api",
    # The interactive docs load scripts from a CDN, and the site loads nothing from elsewhere.
    docs_url=None,
    openapi_url=None,
)
api.add_router("/", lessons_router)


def error_response(detail: str, status: int) -> JsonResponse:
    """An API error as every API error looks: JSON with a `detail` message."""
    return JsonResponse({"detail": detail}, status=status)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, error: HttpError):
    return api.create_response(request, {"detail": str(error)}, status=error.status_code)


@api.exception_handler(RateLimited)
def rate_limited(request: HttpRequest, error: RateLimited):
    response = api.create_response(request, {"detail": str(error)}, status=429)
    response["Retry-After"] = str(error.wait)
    return response


@api.exception_handler(ValidationError)
def validation_error(request: HttpRequest, error: ValidationError):
    problems = "; ".join(
        f"{'.'.join(str(p) for p in _field_path(e.get('loc', [])))}: {e.get('msg', 'is not valid')}"
        for e in error.errors
    )
    return api.create_response(
        request, {"detail": f"The request is not valid: {problems}."}, status=422
    )


def _field_path(loc) -> list:
    """Where a problem is, as the client wrote it: "answer" for ("body", "body", "answer"),
    "q" for ("query", "q"), without django-ninja's source and parameter names."""
    loc = list(loc)
    if loc[:1] in (["query"], ["path"]):
        return loc[1:]
    if loc[:1] == ["body"]:
        return loc[2:] or loc[1:]
    return loc


@api.exception_handler(RequestDataTooBig)
def body_too_large(request: HttpRequest, error: RequestDataTooBig):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 1024
    return error_response(f"The request body is too large: at most {limit} KB is accepted.", 413)


def wrong_method_as_json(view):
    """django-ninja answers a method an address does not take in plain text; make it JSON.
    HEAD is answered as GET is, as Django's own views answer it (the server sends no body)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if response.status_code != 405:
            return response
        allowed = response["Allow"]
        if request.method == "HEAD" and "GET" in allowed.split(", "):
            request.method = "GET"
            try:
                return view(request, *args, **kwargs)
            finally:
                request.method = "HEAD"
        json = error_response(
            f"This address does not take {request.method}; it takes {allowed}.", 405
        )
        json["Allow"] = allowed
        return json

    return wrapped


def api_urls():
    """The API's URL patterns for `include`, every view answering errors in JSON."""
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        pattern.callback = wrong_method_as_json(pattern.callback)
    return patterns, app_name, namespace


@require_safe
def openapi_json(request: HttpRequest) -> JsonResponse:
    schema = api.get_openapi_schema(path_prefix="/api/v1")
    return JsonResponse(schema, json_dumps_params={"ensure_ascii": False})
