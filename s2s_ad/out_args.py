"""Where a NumPy function, ufunc or array method takes `out` by position.

`np.exp(x, y)`, `np.add(a, b, y)`, `np.sum(a, 0, None, y)` and
`x.sum(0, None, y)` write into `y` as `out=y` does; both the normalizer
(normalize/calls.py, which passes it by keyword) and the effects reader
(effects.py, which finds a helper's updates of its parameters) ask here.
"""
from __future__ import annotations

import inspect

import numpy


def positional_names(callee, method: str | None = None) -> list | None:
    """The names of the parameters a call fills by position: a ufunc's
    inputs (unnamed) then its outputs (`out`); a NumPy function's from its
    signature; for an array method `x.m(...)` (`callee` unknown, `method`
    its name), those of `np.m` after the array.  None where not known."""
    if isinstance(callee, numpy.ufunc):
        return [""] * callee.nin + ["out"] * callee.nout
    shift = 0
    if callee is None and method is not None:
        callee, shift = getattr(numpy, method, None), 1
        if not hasattr(numpy.ndarray, method) or isinstance(callee, numpy.ufunc):
            return None
    if not str(getattr(callee, "__module__", None)).startswith("numpy") and \
            not isinstance(getattr(callee, "__self__", None), numpy.ufunc):
        return None                     # (a function of the user's may name one `out`)
    try:
        params = inspect.signature(callee).parameters.values()
    except (TypeError, ValueError):
        return None
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[shift:]


def out_position(names: list | None) -> int | None:
    return names.index("out") if names and "out" in names else None
