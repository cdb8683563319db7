"""What every list of the admin refuses (RefusesMalformedInput), the accounts' lists among
them. The site itself is lightmysky/admin_site.py."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin import ActionLocation, helpers
from django.contrib.admin.filters import SimpleListFilter
from django.contrib.admin.utils import get_fields_from_path
from django.contrib.admin.widgets import AutocompleteSelectMultiple
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.core.exceptions import BadRequest, ValidationError
from django.db import connection
from django.db.models import Field, ManyToManyField, Model, QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest, HttpResponse


def model_id(model: type[Model], value: Any) -> int | None:
    """The value as one of the model's ids, if it can be one (a whole number its primary key's
    column holds), else None."""
    try:
        number = int(str(value))
    except ValueError:
        return None
    return number if fits(model._meta.pk, number) else None


def fits(field: Field, value: Any) -> bool:
    """Whether a value typed into a list's address can be compared with the field without
    overflowing what the database or Python holds (a whole number too long for its column, a
    moment in year 1 given east of UTC). One that is not a value of the field at all passes:
    the list says it is wrong."""
    try:
        typed = field.to_python(value)
    except ValidationError:
        return True
    if isinstance(typed, datetime):
        try:
            typed.astimezone(UTC)  # where Django turns it before the query
        except OverflowError:
            return False
    elif isinstance(typed, int) and not isinstance(typed, bool):
        ranges = connection.ops.integer_field_ranges
        low, high = ranges.get(field.get_internal_type(), ranges["BigIntegerField"])
        return low <= typed <= high
    return True


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


# How Django's own field filters end a field's path in the address (a related one's is its
# target's name and "exact").
FILTER_ENDINGS = ("exact", "isnull", "isempty", "gte", "lt")


class RefusesMalformedInput(admin.ModelAdmin):
    """Django's admin takes any lookup on a model's own fields (or a list's annotations)
    typed into a list's address, and some fail only when the query runs (a year out of range,
    a broken regular expression, a lookup PostgreSQL alone knows, a number too long for its
    column): a list here takes only its own filters, with values that fit. And Django runs an
    action on selected "ids" that are not ids. Both are refused here with a 400 that says
    why (lightmysky.views.bad_request). Its fields of many items take only ids
    (IdsChoiceField, IdsAutocomplete)."""

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
        if not super().lookup_allowed(lookup, value, request) or "\x00" in str(value):
            return False  # (PostgreSQL's text cannot hold a NUL, even to compare it)
        paths, parameters = self.offered_filters(request)
        if lookup in parameters:
            return True  # a filter of the list's own, which reads its value itself
        for path in paths:
            ending = lookup.removeprefix(f"{path}{LOOKUP_SEP}")
            if ending == lookup:
                continue
            field = get_fields_from_path(self.model, path)[-1]
            target = getattr(field, "target_field", None)  # a foreign key's
            if target is not None and ending == f"{target.name}{LOOKUP_SEP}exact":
                return fits(target, value)
            if ending in FILTER_ENDINGS:
                return ending in ("isnull", "isempty") or fits(field, value)
        return False

    def offered_filters(self, request: HttpRequest) -> tuple[set[str], set[str]]:
        """The field paths the list filters by, and its own filters' parameters."""
        paths, parameters = set(), set()
        for item in self.get_list_filter(request):
            if isinstance(item, type) and issubclass(item, SimpleListFilter):
                parameters.add(str(item.parameter_name))
            else:
                paths.add(str(item[0] if isinstance(item, (list, tuple)) else item))
        return paths, parameters

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        # The list's search box refuses a NUL itself; the autocomplete's search does not.
        if "\x00" in search_term:
            raise BadRequest("Nothing was searched: the words held a NUL character.")
        return super().get_search_results(request, queryset, search_term)

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
