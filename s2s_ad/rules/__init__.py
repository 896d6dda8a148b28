"""Derivative rules, grouped by domain, and the registry they live in.

Importing this package registers every built-in rule.  Users add their own
with `s2s_ad.adjoint`, `s2s_ad.tangent` and `s2s_ad.nondifferentiable`
(re-exported here).
"""
from .. import runtime
from .registry import (Attr, Method, Rule, adjoint, display_name,
                       is_nondifferentiable, lookup, nondifferentiable,
                       nondifferentiables, registered, tangent)


def stop_gradient_like(obj) -> bool:
    """Whether calling `obj` marks its argument as carrying no gradient."""
    return obj is runtime.stop_gradient


# Registration happens on import; the order does not matter.
from . import (elementwise, linalg, math, methods, operators, reductions,  # noqa: E402,F401
               scatter, shapes, signal, statistics, ufuncs)
from . import adjoint_helpers  # noqa: E402,F401  (after the rules it may override)
from .registry import seal  # noqa: E402

seal()

__all__ = ["Attr", "Method", "Rule", "adjoint", "tangent", "display_name",
           "is_nondifferentiable", "lookup", "nondifferentiable",
           "nondifferentiables", "registered", "stop_gradient_like"]
