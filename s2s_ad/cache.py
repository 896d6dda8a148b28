"""The compiled-function cache.

Keyed weakly on the primal function object, then on the options of the
request.  An entry also remembers the primal's code object and defaults,
the rule registry's version, and the entry's `stale()` check (guards.py)
when the function resolved names at compile time: a function whose
`__code__` or defaults were replaced, a rule registered since, or a name
(closure cell, global, builtin, import, or one a callee's adjoint pair was
compiled against) rebound or edited since, forces a recompile.

Where the entries live: in the primal's own `__dict__` (with a weak
reference to their owner, so a wrapper that copied the `__dict__` with
`functools.wraps` starts its own), else in a table keyed weakly on the
primal.  A derived function references its primal's globals, which often
reference the primal: held in the primal itself, that is an ordinary cycle
the garbage collector frees with the function (a function from `exec` or
an IPython cell is not kept alive by the cache).

Invariants: lookups take no lock (a dict read is atomic); compilation of
one function happens under a lock, so concurrent first calls compile once.
"""
from __future__ import annotations

import threading
import weakref
from typing import Callable

_ATTRIBUTE = "__s2s_ad_cache__"
_generation = 0                     # clear() starts a new one
_entries: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # no __dict__
_lock = threading.RLock()


def _table(func, create: bool = False) -> dict | None:
    """The entries of `func` (created if asked), or None."""
    attrs = getattr(func, "__dict__", None)
    if isinstance(attrs, dict):
        held = attrs.get(_ATTRIBUTE)
        if held is not None and held[0]() is func and held[1] == _generation:
            return held[2]
        if not create:
            return None
        table: dict = {}
        attrs[_ATTRIBUTE] = (weakref.ref(func), _generation, table)
        return table
    try:
        return _entries.setdefault(func, {}) if create else _entries.get(func)
    except TypeError:               # neither a __dict__ nor weak references
        return None


def lookup(func, key, version: int):
    """The cached derived function, or None (also when it is stale)."""
    per_func = _table(func)
    if per_func is None:
        return None
    hit = per_func.get(key)
    if hit is None or hit[1] != version:
        return None
    code, defaults, kwdefaults = hit[0]     # (edited in place: compiled anew)
    if func.__code__ is not code or func.__defaults__ is not defaults or \
            func.__kwdefaults__ is not kwdefaults or hit[3] is not None and _stale(hit[3]):
        return None
    return hit[2]


def _state(func) -> tuple:
    """What a function computes with besides the names it reads: its code
    and defaults (IPython's autoreload replaces them in place)."""
    return func.__code__, func.__defaults__, func.__kwdefaults__


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
        table = _table(func, create=True)
        if table is not None:
            table[key] = (_state(func), version, derived, stale)
        return derived


def discard(func, key, derived) -> None:
    """Forget the entry for (func, key) if it still holds `derived`."""
    with _lock:
        per_func = _table(func)
        if per_func is not None and key in per_func and per_func[key][2] is derived:
            del per_func[key]


def clear() -> None:
    """Forget every entry (a new generation: tables held by functions are
    left to their owners and no longer read)."""
    global _generation
    with _lock:
        _entries.clear()
        _generation += 1
