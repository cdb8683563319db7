"""The admin site: Django's, with sign-ins limited (settings.RATE_LIMITS["admin_login"])."""

from __future__ import annotations

import math
from typing import Any, cast

from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.views.decorators.debug import sensitive_variables

from lightmysky.ratelimit import (
    remember_known_browser,
    sign_in_attempt_count,
    sign_in_attempt_take_back,
)

TOO_MANY_FAILURES = "too_many_failures"


class LimitedAuthenticationForm(AdminAuthenticationForm):
    """Each sign-in is counted before its password is checked; with a budget spent, the password
    is not checked at all, and the form says how long to wait. The message and the work done
    are the same whether an account has the name or not. A browser that signed in to the
    account before, with its present password, is refused only by its own budget
    (lightmysky.ratelimit.sign_in_attempt_count)."""

    error_messages = {
        **AdminAuthenticationForm.error_messages,
        TOO_MANY_FAILURES: (
            "Too many failed sign-ins for this name or from this address. Try again in %(minutes)s."
        ),
    }
    wait: int | None = None  # seconds, once refused

    @sensitive_variables()
    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        if username is None or not self.cleaned_data.get("password"):
            return super().clean()  # a field is missing, which the form says: nothing is checked
        request = cast(HttpRequest, self.request)  # the admin's login view always passes it
        attempt = sign_in_attempt_count(request, username=username)
        if attempt.wait:
            self.wait = attempt.wait
            minutes = math.ceil(attempt.wait / 60)
            raise ValidationError(
                self.error_messages[TOO_MANY_FAILURES],
                code=TOO_MANY_FAILURES,
                params={"minutes": f"{minutes} minute{'s' if minutes > 1 else ''}"},
            )
        cleaned_data = super().clean()  # a wrong password raises: the attempt stays counted
        sign_in_attempt_take_back(attempt)
        return cleaned_data


class LimitedAdminSite(admin.AdminSite):
    login_form = LimitedAuthenticationForm

    def login(self, request: HttpRequest, extra_context: dict[str, Any] | None = None):
        response: HttpResponse = super().login(request, extra_context)
        form = getattr(response, "context_data", {}).get("form")
        if isinstance(form, LimitedAuthenticationForm) and form.wait:
            response.status_code = 429
            response["Retry-After"] = str(form.wait)
        if request.method == "POST" and request.user.is_authenticated:
            remember_known_browser(response, request.user)
        return response
