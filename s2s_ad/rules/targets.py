"""How a rule's target is named and how its template must fit it.

`display_name` names a target as the user writes it (`np.linalg.inv`,
`np.maximum.accumulate`, `ndarray.sum()`), for messages; `check_signature`
rejects a template whose parameters do not mirror the target's, when the
rule is registered, so a malformed rule fails at import, not in a user's
gradient.
"""
from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass

import numpy as np

from ..errors import RuleError


@dataclass(frozen=True)
class Method:
    """An ndarray method called on a value: `x.sum(...)`; the template's
    first operand is the receiver, so a function's rule can serve its method
    twin when the parameters after the array agree (`np.sum`, `x.sum`)."""
    name: str


@dataclass(frozen=True)
class Literal:
    """A tuple or list display: `(a, b)`, `[a, b]`."""
    name: str


@dataclass(frozen=True)
class Attr:
    """An ndarray attribute read from a value: `x.T`."""
    name: str


def ufunc_of(target):
    """The ufunc whose method `target` is (`np.add` for `np.add.reduce`), or None."""
    owner = getattr(target, "__self__", None)
    return owner if isinstance(owner, np.ufunc) else None


def display_name(target) -> str:
    """How the user would write `target`: `np.linalg.inv`, `math.sin`,
    `np.maximum.accumulate`."""
    if ufunc_of(target) is not None:
        return f"{display_name(target.__self__)}.{target.__name__}"
    if isinstance(target, Method):
        return f"ndarray.{target.name}()"
    if isinstance(target, Attr):
        return f"ndarray.{target.name}"
    if isinstance(target, Literal):
        return f"{target.name} display"
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", repr(target))
    if isinstance(target, np.ufunc) and getattr(np, name, None) is not target:
        return _ufunc_home(target)      # a ufunc of another library's (scipy.special)
    if isinstance(target, np.ufunc) or module.startswith("numpy"):
        sub = module.replace("numpy.", "").replace("numpy", "")
        sub = "" if sub.startswith("_") or sub in ("", "core", "lib") else sub + "."
        return f"np.{sub}{name}"
    if module == "_operator":
        return f"operator.{name}"
    return f"{module}.{name}" if module and module != "builtins" else name


def _ufunc_home(ufunc) -> str:
    """`scipy.special.erf` for a ufunc that is not NumPy's (ufuncs carry no
    module): the imported module that holds it under its name, else its
    name alone."""
    for module_name in sorted(sys.modules):
        module = sys.modules[module_name]
        if getattr(module, ufunc.__name__, None) is ufunc and not module_name.startswith("_") \
                and "._" not in module_name:
            return f"{module_name}.{ufunc.__name__}"
    return ufunc.__name__


_METHOD_OPERANDS = {"reduce": 1, "accumulate": 1, "outer": 2, "reduceat": 2, "at": 2}


def check_signature(target, tpl) -> None:
    """Reject a template whose parameters do not fit the target's."""
    params = list(tpl.signature.parameters.values())
    where = f"rule {tpl.name!r} for {display_name(target)}"
    if isinstance(target, np.ufunc):
        required = [p for p in params if p.default is p.empty]
        if len(required) != target.nin:
            raise RuleError(f"{where}: takes {len(required)} operand(s), "
                            f"the ufunc takes {target.nin}")
        return
    if isinstance(target, Literal):
        return
    if ufunc_of(target) is not None:        # np.add.reduce: (ufunc, array, ...)
        operands = _METHOD_OPERANDS.get(target.__name__, 1)
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
        if len(positional) < 1 + operands:
            raise RuleError(f"{where}: takes the ufunc, then {operands} operand(s)",
                            hint=f"write it as def rule(z, ufunc, ...), as "
                                 f"ufunc.{target.__name__}(self, ...) is declared")
        return
    if isinstance(target, (Method, Attr)):
        if not params or params[0].kind not in (params[0].POSITIONAL_ONLY,
                                                params[0].POSITIONAL_OR_KEYWORD):
            raise RuleError(f"{where}: the first operand must be the receiver")
        return
    _check_parameters(target, params, where)


def _check_parameters(target, params: list, where: str) -> None:
    """A function's template names its parameters, in their order."""
    try:
        target_sig = inspect.signature(target)
    except (TypeError, ValueError):
        return          # a C function without a signature: nothing to check
    theirs = [p.name for p in target_sig.parameters.values()
              if p.kind not in (p.VAR_KEYWORD,)]
    ours = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    missing = [p.name for p in target_sig.parameters.values()
               if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               and p.name not in ours]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        missing = []        # `*args` takes whatever the target requires
    unknown = [n for n in ours if n not in theirs]
    in_order = [n for n in theirs if n in ours] == ours
    if missing or unknown or not in_order:
        raise RuleError(f"{where}: template parameters ({', '.join(ours)}) do not "
                        f"match the signature {target_sig}",
                        hint="name the template's parameters (after the result) "
                             "as the function's, in the same order")
