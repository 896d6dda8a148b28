"""What a guarded derived function calls when what it was compiled
against changed (guards.py): `Rederive` derives anew and forwards the call,
refusing one whose defaulted arguments may be stale (`_check_defaults`).

Invariant: it holds the primal weakly, with the parts to rebuild it
(`Revivable`, which a derived function's twin for differentiating it again
uses too: driver.py), so that the cache's weak keys still let the primal go.
"""
from __future__ import annotations

import types
import weakref
from dataclasses import dataclass, field

from .errors import S2SADError, location_of


@dataclass(eq=False)
class Revivable:
    """A primal held weakly, with the parts to rebuild it while it is gone
    (`grad(lambda x: ...)` keeps no reference to its lambda): calling it
    gives the primal, or one function rebuilt from its code, globals,
    closure and defaults, the same each time.  A derived function cannot be
    rebuilt so (its source leaves `linecache` with it): `of(f, keep=True)`
    holds it, as `grad(grad(f))` holds `grad(f)`."""

    primal: weakref.ref
    _parts: tuple
    _kept: object = None

    @classmethod
    def of(cls, primal, keep: bool = False) -> "Revivable":
        parts = (primal.__code__, primal.__globals__, primal.__name__, primal.__defaults__,
                 primal.__closure__, primal.__kwdefaults__, primal.__qualname__,
                 primal.__module__)
        return cls(weakref.ref(primal), parts, primal if keep else None)

    def __call__(self):
        func = self.primal()
        if func is None:
            if self._kept is None:
                code, globals_, name, defaults, closure, kwdefaults, qualname, module = self._parts
                self._kept = types.FunctionType(code, globals_, name, defaults, closure)
                self._kept.__kwdefaults__ = kwdefaults
                self._kept.__qualname__, self._kept.__module__ = qualname, module
            func = self._kept
        return func

    @property
    def qualname(self) -> str:
        return self._parts[6]


@dataclass(eq=False)
class Rederive:
    """What a guarded function calls when a name was rebound: `again(primal,
    options, stale function)` derives anew; the call is forwarded to it."""

    function: Revivable
    options: object
    again: object
    derived: weakref.ref = field(default=lambda: None)

    def __call__(self, *args, **kwargs):
        _check_defaults(self.function(), self.derived(), args, kwargs)
        fresh = self.again(self.function(), self.options, self.derived())
        return fresh(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<s2s_ad rederive of {self.function.qualname}>"


def _check_defaults(primal, stale, args: tuple, kwargs: dict) -> None:
    """Refuse to forward a call whose defaulted arguments may be stale:
    the guard passes on every parameter, and a value that is the old
    default (the primal's defaults were replaced since: `f.__defaults__ =
    ...`, or IPython's autoreload) may have been given by the caller or
    filled in by the stale function, which cannot be told apart."""
    if stale is None:
        return
    old, new = stale.__defaults__ or (), primal.__defaults__ or ()
    count = stale.__code__.co_argcount
    names = stale.__code__.co_varnames[:count]
    first = count - len(old)        # (the parameters with defaults come last)
    doubtful = [names[first + i] for i, value in enumerate(old)
                if first + i < len(args) and args[first + i] is value and
                (len(new) != len(old) or new[i] is not value)]
    old_kw, new_kw = stale.__kwdefaults__ or {}, primal.__kwdefaults__ or {}
    doubtful += [k for k, value in old_kw.items()
                 if kwargs.get(k, _MISSING) is value and new_kw.get(k, _MISSING) is not value]
    if doubtful:
        raise S2SADError(
            f"the defaults of {primal.__qualname__!r} were replaced after its derived "
            f"function was made, and this call passes the old default of "
            f"{', '.join(f'`{n}`' for n in doubtful)} (given, or filled in: s2s_ad cannot "
            "tell which)", location_of(primal),
            hint=f"derive it again (`s2s_ad.grad({primal.__name__})` and friends) after "
                 "changing the function")


_MISSING = object()
