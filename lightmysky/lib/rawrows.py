"""Model instances from a query written out in SQL, for the few reads on every request.

Building a query with the ORM costs more Python than running a small one: about 0.3 ms, on
pages that take 1 ms in all. Such a query is written out once instead, selecting each model's
columns with `columns`, and its rows become instances with `instances`, converted as the ORM
converts them (SQLite's text datetimes and integer booleans, JSON, time zones).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connections
from django.db.models import Model
from django.db.models.sql import Query


def columns(model: type[Model], alias: str) -> str:
    """Every concrete column of `model` under a table alias, in field order."""
    return ", ".join(f"{alias}.{field.column}" for field in model._meta.concrete_fields)


def instances(
    sql: str, params: Sequence[Any], models: Sequence[type[Model]], *, using: str = "default"
) -> list[tuple[Model | None, ...]]:
    """Run `sql`, which selects `columns(model, …)` of each model in turn, and return one
    tuple of instances per row; None where an outer join found no row (its primary key null)."""
    connection = connections[using]
    fields = [field for model in models for field in model._meta.concrete_fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    compiler = Query(models[0]).get_compiler(using=using)
    converters = compiler.get_converters(
        [field.get_col(field.model._meta.db_table) for field in fields]
    )
    if converters:
        rows = list(compiler.apply_converters(rows, converters))
    found = []
    for row in rows:
        start, objects = 0, []
        for model in models:
            width = len(model._meta.concrete_fields)
            values = row[start : start + width]
            start += width
            names = [field.attname for field in model._meta.concrete_fields]
            pk_value = values[names.index(model._meta.pk.attname)]
            objects.append(None if pk_value is None else model.from_db(using, names, values))
        found.append(tuple(objects))
    return found
