"""The compiled-function cache.

Keyed weakly on the primal function object, then on the options of the
request.  An entry also remembers the primal's code object, the rule
registry's version, and the entry's `stale()` check (guards.py) when the
function resolved names at compile time: a function whose `__code__` was
replaced, a rule registered since, or a name (closure cell, global, builtin,
import, or one a callee's adjoint pair was compiled against) rebound since,
forces a recompile.

Invariants: lookups take no lock (a dict read is atomic); compilation of
one function happens under a lock, so concurrent first calls compile once.
An entry does not reference its key strongly through its staleness check
(guards.py keeps the primal itself out of it), so the weak keys let a
function go.
"""
from __future__ import annotations

import threading
import weakref
from typing import Callable

_entries: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_lock = threading.RLock()


def lookup(func, key, version: int):
    """The cached derived function, or None (also when it is stale)."""
    try:
        per_func = _entries.get(func)
    except TypeError:
        return None
    if per_func is None:
        return None
    hit = per_func.get(key)
    if hit is None or hit[0] is not func.__code__ or hit[1] != version or \
            hit[3] is not None and _stale(hit[3]):
        return None
    return hit[2]


def _stale(check) -> bool:
    try:
        return bool(check())
    except Exception:       # a rebound name whose `==` raises: stale too
        return True


def get_or_build(func, key, version: int, build: Callable):
    """The cached derived function, or `build()`'s (derived, stale check)."""
    hit = lookup(func, key, version)
    if hit is not None:
        return hit
    with _lock:
        hit = lookup(func, key, version)
        if hit is not None:
            return hit
        derived, stale = build()
        _entries.setdefault(func, {})[key] = (func.__code__, version, derived, stale)
        return derived


def discard(func, key, derived) -> None:
    """Forget the entry for (func, key) if it still holds `derived`."""
    with _lock:
        per_func = _entries.get(func)
        if per_func is not None and key in per_func and per_func[key][2] is derived:
            del per_func[key]


def clear() -> None:
    with _lock:
        _entries.clear()
