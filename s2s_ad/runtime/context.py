"""`with` statements in generated code.

The normalized function marks a `with M as v:` block by `v = enter(M)`
before its body and `exit(M)` after it, at the same level.  Where `M` only
sets state (`np.errstate`, `warnings.catch_warnings`, ...: `sets_state`)
the reverse sweep brackets the body's reverse the same way, with `M`
evaluated again (such a manager cannot be entered twice); any other manager
(a file, a timer) is entered once, by the primal code only.  Code
generation prints each bracket as `with M as v:` around what it holds, so
`enter` and `exit` never run; `managed(M)` is what the printed statement
enters when `M` might swallow an exception.  A user's `try` statement is
`with no_exception(where):` around its body, then its `else` and `finally`
clauses: the path on which the body raises nothing.
"""
from __future__ import annotations

import contextlib
import warnings

import numpy as np

from ..errors import Location, S2SADError, UnsupportedSyntaxError, UnsupportedValueError
from .origins import origin

# managers that only set state for the code they hold, and let every
# exception pass: the reverse sweep runs under one again, entered directly
STATE_MANAGERS = (np.errstate, np.printoptions, warnings.catch_warnings,
                  contextlib.nullcontext)


def sets_state(callee) -> bool:
    """Whether `callee(...)` makes one of `STATE_MANAGERS`."""
    return any(callee is m or isinstance(callee, type) and isinstance(m, type)
               and issubclass(callee, m) for m in STATE_MANAGERS)


def enter(manager):
    """Where a `with manager:` block starts (printed as that statement)."""
    raise RuntimeError("s2s_ad: a with block was not printed as one (a bug in s2s_ad)")


def exit(manager):      # noqa: A001 (generated code calls it as rt.exit)
    """Where a `with manager:` block ends."""
    raise RuntimeError("s2s_ad: a with block was not printed as one (a bug in s2s_ad)")


MARKERS = frozenset({enter, exit})


class managed:
    """`with managed(m):` is `with m:`, except that an exception `m`
    swallows is reported: the block stopped part way, and neither the tape
    nor the gradient would follow what ran."""

    def __init__(self, manager):
        self.manager = manager

    def __enter__(self):
        return self.manager.__enter__()

    def __exit__(self, kind, value, traceback):
        if self.manager.__exit__(kind, value, traceback) and kind is not None:
            raise UnsupportedValueError(
                f"the context manager {self.manager!r} suppressed a {kind.__name__} "
                "raised in its block; s2s_ad differentiates a with block only when it "
                "runs to its end", origin(),
                hint="handle the exception inside the block, or wrap the block's result "
                     "in stop_gradient(...)") from value
        return False


class no_exception:
    """The body of a user's `try` statement: the derived function follows
    the path on which it raises nothing (its `except` clauses never run), so
    an exception there is a located error naming it.  `where`: (file, line,
    column, source line) of the `try`."""

    def __init__(self, where: tuple):
        self.where = where

    def __enter__(self):
        return None

    def __exit__(self, kind, value, traceback):
        if kind is None or issubclass(kind, S2SADError) or not issubclass(kind, Exception):
            return False
        raise UnsupportedSyntaxError(
            f"the body of this try statement raised {kind.__name__}: {value}; s2s_ad "
            "differentiates a try statement along the path on which its body raises "
            "nothing (its except clauses do not run in the derived function)",
            Location(*self.where),
            hint="test for the condition before the operation (`if ...:`) instead of "
                 "catching the exception, or compute the value under stop_gradient(...)"
        ) from value
