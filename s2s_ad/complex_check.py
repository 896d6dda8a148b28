"""Complex values: refused until s2s_ad differentiates them.

The rules are written for real values.  With a complex intermediate NumPy
quietly drops imaginary parts (a `ComplexWarning` at most) and the gradient
is wrong: `np.abs(x + 1j * x)` used to give 0.  So s2s_ad refuses, with a
located `UnsupportedValueError`:

- statically (`check`): an active statement (one the gradient flows
  through) that holds a complex literal, or that names something making
  complex values: `complex`, a NumPy complex type, a function of `cmath`,
  `np.fft` or `np.emath`;
- at run time (`runtime.like`, the gradient boundary): a gradient that comes
  out complex anyway (a complex argument or seed, `np.sqrt` of a negative
  complex-typed array, ...).

Invariant: inactive code may use complex values freely (they never meet a
rule), as may anything under `stop_gradient`.
"""
from __future__ import annotations

import gast
import numpy as np

from . import astutil, scopes, traversal
from .errors import UnsupportedValueError
from .ir import Source, is_resolved

_COMPLEX_MODULES = ("cmath", "numpy.fft", "numpy.lib.scimath", "numpy.emath")


def check(body: list, active: set, src: Source, locals_: set) -> None:
    """Raise for the first active statement of `body` that makes a complex
    value (see the module docstring)."""
    for stmt in scopes.assignments(body):
        if stmt not in active:
            continue
        for node in traversal.nodes(stmt.value):
            what = _complex_maker(node, src, locals_)
            if what:
                raise UnsupportedValueError(
                    f"s2s_ad does not differentiate complex values, and {what} "
                    f"makes one here, on the path of the gradient", src.locate(stmt),
                    hint="keep the differentiated computation real (e.g. write "
                         "|x + iy| as np.hypot(x, y)), or wrap the complex part in "
                         "stop_gradient(...) if no gradient should flow through it")


def _complex_maker(node, src: Source, locals_: set) -> str | None:
    """What in `node` makes a complex value, described, or None."""
    if isinstance(node, gast.Constant) and isinstance(node.value, complex):
        return f"the complex literal {node.value!r}"
    if not isinstance(node, (gast.Name, gast.Attribute)):
        return None
    obj = src.resolve(node, locals_)
    if not is_resolved(obj):
        return None
    if obj is complex or isinstance(obj, type) and issubclass(obj, np.complexfloating):
        return f"`{astutil.unparse(node)}`"
    module = getattr(obj, "__module__", None) or ""
    if callable(obj) and module.startswith(_COMPLEX_MODULES):
        return f"`{astutil.unparse(node)}`"
    return None
