"""Queries written out in SQL, for the few reads and writes on every request or answer.

Building a query with the ORM costs more Python than running a small one: about 0.3 ms, on
pages that take 1 ms in all. Such a read is written out once instead, selecting each model's
columns with `columns`, and its rows become instances with `instances`, converted as the ORM
converts them (SQLite's text datetimes and integer booleans, JSON, time zones). `save` writes
an instance with statements built once per model.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, cast

from django.db import connections
from django.db.models import Model
from django.db.models.sql import Query


def columns(model: type[Model], alias: str, *, using: str = "default") -> str:
    """Every concrete column of `model` under a table alias, in field order, quoted."""
    quote = connections[using].ops.quote_name
    return ", ".join(
        f"{alias}.{quote(cast(str, field.column))}" for field in model._meta.concrete_fields
    )


def instances(
    sql: str, params: Sequence[Any], models: Sequence[type[Model]], *, using: str = "default"
) -> list[tuple[Model | None, ...]]:
    """Run `sql`, which selects `columns(model, …)` of each model in turn, and return one
    tuple of instances per row; None where an outer join found no row (its primary key null).
    Columns selected after the models' (flags, counts) follow the instances as they are."""
    return from_rows(fetch(sql, params, using=using), models, using=using)


def fetch(sql: str, params: Sequence[Any], *, using: str = "default") -> list[tuple]:
    """The rows of `sql` as the database gives them, for `from_rows` to read in part."""
    with connections[using].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def from_rows(
    rows: Sequence[Sequence[Any]], models: Sequence[type[Model]], *, using: str = "default"
) -> list[tuple[Model | None, ...]]:
    """The rows of a statement that selects `columns(model, …)` of each model, as `instances`
    gives them, for rows read by other means."""
    connection = connections[using]
    converters, slices = _reading(tuple(models), using, connection.vendor)
    if converters:
        converted = [list(row) for row in rows]
        for row in converted:
            for position, (functions, expression) in converters:
                value = row[position]
                for function in functions:
                    value = function(value, expression, connection)
                row[position] = value
        rows = converted
    after = slices[-1][2]
    return [
        tuple(
            None if row[begin + pk_at] is None else model.from_db(using, names, row[begin:end])
            for model, begin, end, names, pk_at in slices
        )
        + tuple(row[after:])
        for row in rows
    ]


@functools.cache
def _reading(models: tuple[type[Model], ...], using: str, vendor: str) -> tuple[list, list]:
    """How rows selecting `models`' columns are read, worked out once: the ORM's converters for
    each column that has any, and each model's slice of a row, its field names and where its
    primary key sits. (`vendor` is in the key for the tests that switch databases.)"""
    fields = [field for model in models for field in model._meta.concrete_fields]
    compiler = Query(models[0]).get_compiler(using=using)
    converters = compiler.get_converters(
        [field.get_col(field.model._meta.db_table) for field in fields]
    )
    slices, start = [], 0
    for model in models:
        names = [field.attname for field in model._meta.concrete_fields]
        slices.append(
            (model, start, start + len(names), names, names.index(model._meta.pk.attname))
        )
        start += len(names)
    return list(converters.items()), slices


def save(instance: Model, *, using: str = "default") -> None:
    """`instance.save()` for the writes of every answer: an INSERT (the primary key read back)
    or an UPDATE of every column, with statements written once per model and values prepared by
    the fields as the ORM prepares them. No signals are sent (the models it is used for have
    none). A value the database must supply (a `db_default` left unset) goes through the ORM."""
    model = type(instance)
    connection = connections[using]
    params = values(instance, using=using)
    if params is None:
        instance.save(using=using)
        return
    with connection.cursor() as cursor:
        if instance._state.adding:
            cursor.execute(_insert_sql(model, using), params)
            instance.pk = cursor.fetchone()[0]
        else:
            cursor.execute(_update_sql(model, using), [*params, instance.pk])
    saved(instance, using=using)


def values(instance: Model, *, using: str = "default") -> list[Any] | None:
    """What `save` writes to each column of `quoted_columns`, prepared as the ORM prepares it;
    None when a value is one the database must supply (an expression, such as a `db_default`)."""
    connection = connections[using]
    adding = instance._state.adding
    fields = [field for field in type(instance)._meta.concrete_fields if not field.primary_key]
    raw = [field.pre_save(instance, adding) for field in fields]
    if any(hasattr(value, "resolve_expression") for value in raw):
        return None
    return [
        field.get_db_prep_save(value, connection) for field, value in zip(fields, raw, strict=True)
    ]


def saved(instance: Model, *, using: str = "default") -> None:
    """Mark an instance written by hand as the ORM marks one it saved."""
    instance._state.adding = False
    instance._state.db = using


@functools.cache
def quoted_columns(model: type[Model], using: str = "default") -> tuple[str, list[str], str]:
    """The table, the columns but the primary key's (in the order of `values`), and the primary
    key's, quoted."""
    quote = connections[using].ops.quote_name
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    primary_key = model._meta.pk
    return (
        quote(model._meta.db_table),
        [quote(cast(str, field.column)) for field in fields],
        quote(cast(str, primary_key.column)),
    )


@functools.cache
def _insert_sql(model: type[Model], using: str) -> str:
    table, columns, primary_key = quoted_columns(model, using)
    placeholders = ", ".join(["%s"] * len(columns))
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({placeholders})"
        f" RETURNING {primary_key}"
    )


@functools.cache
def _update_sql(model: type[Model], using: str) -> str:
    table, columns, primary_key = quoted_columns(model, using)
    assignments = ", ".join(f"{column} = %s" for column in columns)
    return f"UPDATE {table} SET {assignments} WHERE {primary_key} = %s"
