"""The compiled-function cache.

Keyed weakly on the primal function object, then on the options of the
request.  An entry also remembers the primal's code object and the rule
registry's version: a function whose `__code__` was replaced, or a rule
registered since, forces a recompile.

Invariants: lookups take no lock (a dict read is atomic); compilation of
one function happens under a lock, so concurrent first calls compile once.
"""
from __future__ import annotations

import threading
import weakref
from typing import Callable

_entries: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_lock = threading.RLock()


def lookup(func, key, version: int):
    """The cached derived function, or None."""
    try:
        per_func = _entries.get(func)
    except TypeError:
        return None
    if per_func is None:
        return None
    hit = per_func.get(key)
    if hit is None or hit[0] is not func.__code__ or hit[1] != version:
        return None
    return hit[2]


def get_or_build(func, key, version: int, build: Callable):
    hit = lookup(func, key, version)
    if hit is not None:
        return hit
    with _lock:
        hit = lookup(func, key, version)
        if hit is not None:
            return hit
        derived = build()
        _entries.setdefault(func, {})[key] = (func.__code__, version, derived)
        return derived


def clear() -> None:
    with _lock:
        _entries.clear()
