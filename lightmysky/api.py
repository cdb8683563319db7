"""The JSON API at /api/v1/, its OpenAPI 3.1 description generated from the code by django-ninja."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
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
        f"{'.'.join(str(p) for p in e.get('loc', []))}: {e.get('msg', 'is not valid')}"
        for e in error.errors
    )
    return api.create_response(
        request, {"detail": f"The request is not valid: {problems}."}, status=422
    )


@require_safe
def openapi_json(request: HttpRequest) -> JsonResponse:
    schema = api.get_openapi_schema(path_prefix="/api/v1")
    return JsonResponse(schema, json_dumps_params={"ensure_ascii": False})
