"""Pages that are the same for every reader but for a few parts: the rest rendered once.

A learner's lesson or practice page differs from every other reader's only in the header's
counter, their constellation and (practising) the round's card and progress. The page is
rendered once per content version with a marker in each of those places (the template shows
`{{ <name>_slot }}` there) and kept as strings in this process's memory; a request renders only
its own parts and joins them in. Reading it costs no unpickling of template nodes.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from lightmysky.lib.versioned import versioned_in_memory

_SLOT = re.compile(r"<!--slot:(\w+)-->")


def framed(
    request: HttpRequest,
    template: str,
    context: Callable[[], Mapping[str, object]],
    parts: Mapping[str, Callable[[], str]],
    *,
    name: str,
    version: int,
) -> str:
    """`template` rendered with `context()` (the same for everyone, built only when the frame
    is) once per content version, with the output of each of `parts` in place of its
    `<name>_slot`."""

    def build() -> tuple[str, ...]:
        slots = {f"{slot}_slot": mark_safe(f"<!--slot:{slot}-->") for slot in parts}
        html = render_to_string(template, {**context(), **slots}, request=request)
        return tuple(_SLOT.split(html))

    pieces = versioned_in_memory(f"frame:{name}", version, build)
    html = [pieces[0]]
    for index in range(1, len(pieces), 2):
        html += (parts[pieces[index]](), pieces[index + 1])
    return "".join(html)


_remembered: OrderedDict[tuple[str, Hashable], str] = OrderedDict()
_remembered_lock = threading.Lock()
REMEMBERED_ENTRIES = 2048  # a few KB each: a few MB a process at most


def remembered(
    template: str, names: tuple[str, ...], context: Mapping[str, object], key: Hashable
) -> str:
    """`template` rendered from the variables `names` of `context` alone (no request, no context
    processors), and kept in this process's memory under `key`: the values of those variables
    that the template shows, which must decide its output wholly. A learner's small parts (the
    header's counter, a constellation, a question's form) take a handful of values that recur
    from page to page, and rendering them cost more than the rest of the request. The least
    recently used of at most REMEMBERED_ENTRIES go first."""
    entry = (template, key)
    with _remembered_lock:
        html = _remembered.get(entry)
        if html is not None:
            _remembered.move_to_end(entry)
            return html
    html = render_to_string(template, {name: context.get(name) for name in names})
    with _remembered_lock:
        _remembered[entry] = html
        if len(_remembered) > REMEMBERED_ENTRIES:
            _remembered.popitem(last=False)
    return html
