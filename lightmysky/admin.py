"""What every list of the admin refuses (RefusesMalformedInput), the accounts' lists among
them. The site itself is lightmysky/admin_site.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin import ActionLocation, helpers
from django.contrib.admin.filters import SimpleListFilter
from django.contrib.admin.widgets import AutocompleteSelectMultiple
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.core.exceptions import BadRequest, FieldDoesNotExist, ValidationError
from django.db import connection
from django.db.models import ManyToManyField, Model, QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest, HttpResponse


def model_id(model: type[Model], value: Any) -> int | None:
    """The value as one of the model's ids, if it can be one (a whole number its primary key's
    column holds), else None."""
    try:
        number = int(str(value))
    except ValueError:
        return None
    low, high = connection.ops.integer_field_range(model._meta.pk.get_internal_type())
    return number if low <= number <= high else None


class IdsChoiceField(forms.ModelMultipleChoiceField):
    """Django's field for many items, which looks up a value too large for the column and
    fails: such a value is refused as not a valid choice, as a word is."""

    def clean(self, value: Any) -> Any:
        for pk in value if isinstance(value, (list, tuple)) else []:
            if self.queryset is not None and model_id(self.queryset.model, pk) is None:
                raise ValidationError(
                    self.error_messages["invalid_pk_value"],
                    code="invalid_pk_value",
                    params={"pk": pk},
                )
        return super().clean(value)


class IdsAutocomplete(AutocompleteSelectMultiple):
    """Django's autocomplete box, which draws a form sent back with a value that cannot be an
    id by looking it up, a server error: such values are left out (the form says they are
    not valid choices)."""

    def optgroups(self, name: str, value: Sequence[str], attr: Any = None) -> Any:
        model = self.field.remote_field.model
        ids = [v for v in value if model_id(model, v) is not None]
        return super().optgroups(name, ids, attr)


# The ways a list's own filters (Django's field filters) put a field in the address.
FILTER_ENDINGS = ("exact", "isnull", "gte", "lt", "id__exact")


class RefusesMalformedInput(admin.ModelAdmin):
    """Django's admin takes any lookup on a model's own fields typed into a list's address,
    and some fail only when the query runs (a year out of range, a broken regular expression,
    a lookup PostgreSQL alone knows); and it runs an action on selected "ids" that are not
    ids. Both are refused here with a 400 that says why (lightmysky.views.bad_request). Its
    fields of many items take only ids (IdsChoiceField, IdsAutocomplete)."""

    def formfield_for_manytomany(
        self, db_field: ManyToManyField[Any, Any], request: HttpRequest | None = None, **kwargs: Any
    ) -> forms.ModelMultipleChoiceField[Any] | None:
        kwargs["form_class"] = IdsChoiceField
        if request is not None and db_field.name in self.get_autocomplete_fields(request):
            using = kwargs.get("using")
            kwargs["widget"] = IdsAutocomplete(db_field, self.admin_site, using=using)
        # (typed `HttpRequest | None` as GroupAdmin's is; Django always passes one)
        return super().formfield_for_manytomany(db_field, request, **kwargs)  # type: ignore[arg-type]

    def lookup_allowed(self, lookup: str, value: Any, request: HttpRequest) -> bool:
        if not super().lookup_allowed(lookup, value, request):
            return False
        first = lookup.split(LOOKUP_SEP)[0]
        try:
            self.model._meta.get_field(first)
        except FieldDoesNotExist:
            if first != "pk":
                return True  # a filter's own parameter, or a name the list reports as wrong
        offered = self.offered_filters(request)
        return lookup in offered or any(
            lookup == f"{path}{LOOKUP_SEP}{ending}" for path in offered for ending in FILTER_ENDINGS
        )

    def offered_filters(self, request: HttpRequest) -> set[str]:
        """The field paths the list filters by, and its own filters' parameters."""
        names = set()
        for item in self.get_list_filter(request):
            if isinstance(item, type) and issubclass(item, SimpleListFilter):
                names.add(str(item.parameter_name))
            else:
                names.add(str(item[0] if isinstance(item, (list, tuple)) else item))
        return names

    def response_action(
        self,
        request: HttpRequest,
        queryset: QuerySet[Any],
        action_location: ActionLocation = ActionLocation.CHANGE_LIST,
    ) -> HttpResponse | None:
        for value in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME):
            if model_id(self.model, value) is None:
                name = self.model._meta.verbose_name
                raise BadRequest(f"Nothing was done: {value!r} is not the id of a {name}.")
        return super().response_action(request, queryset, action_location)


admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class LimitedUserAdmin(RefusesMalformedInput, UserAdmin):
    pass


@admin.register(Group)
class LimitedGroupAdmin(RefusesMalformedInput, GroupAdmin):
    pass
