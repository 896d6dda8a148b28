"""Arguments spread in a call (`f(*t)`, `f(**kw)`), in A-normal form.

Functions over the normalizer's state `nz` (__init__.py).  A `*t` whose
items are known where the call is written (a display, a name bound once to
one, `list(...)`/`tuple(...)` of either) becomes those items; one that
fills the last parameters of a function of the user's of fixed arity
becomes `t[0], t[1], ...` after Python's count check (`rt.check_arity`);
otherwise the last `*t` of a call that may spread it when it runs stays
(dispatch.py).  `**kw` likewise, by key (`rt.check_keywords`).
"""
from __future__ import annotations

import inspect
import types

import gast

from .. import astutil
from ..ir import RUNTIME, is_resolved
from ..rules import registry
from . import comprehensions, lift


def spread_arguments(nz, expr, callee):
    """Spread `*t` and `**kw` of known size into `expr`'s arguments; and
    whether the call may keep one of unknown size, spread when it runs."""
    value = not is_resolved(callee) and \
        getattr(expr.func, "id", None) not in nz.nested       # a function value
    nested = nz.nested.get(getattr(expr.func, "id", None))
    late = value or _spread_late(nz, callee) or nested is not None and not any(
        position is not None for _, _, position, _ in nested.defaults)   # (filled here)
    args = _unstar(nz, comprehensions.consumed_generators(nz, expr, callee), late, callee)
    keywords = _unstar_keywords(nz, expr.keywords, late, callee, len(args))
    expr = gast.copy_location(astutil.call(expr.func, args, keywords), expr)
    return late, expr


def _spread_late(nz, callee) -> bool:
    """Whether a call of `callee` may keep a last `*t` or a `**kw` of
    unknown size, spread when the call runs (dispatch.py): a function of
    the user's, or one with a rule; not what no gradient flows through."""
    return is_resolved(callee) and callable(callee) and \
        not registry.is_nondifferentiable(callee) and \
        (isinstance(callee, types.FunctionType) or registry.lookup(callee) is not None)


def _unstar(nz, args: list, late: bool, callee) -> list:
    """`f(*t)` for a `t` of known length: `f(t[0], t[1], ...)`; the last
    argument of a function of fixed arity is spread to fill it (after
    Python's count check); otherwise the last argument stays `*t`,
    spread when the call runs (dispatch.py), where `late` allows it."""
    out = []
    for arg in args:
        items = known_items(nz, arg.value) if isinstance(arg, gast.Starred) else None
        if not isinstance(arg, gast.Starred):
            out.append(arg)
        elif items is not None:
            out.extend(items)
        elif arg is args[-1] and _arity(callee, len(out)) is not None:
            out.extend(_spread(nz, arg.value, _arity(callee, len(out)), callee))
        elif arg is args[-1] and late:
            out.append(arg)         # spread when the call runs
        else:
            nz.unsupported(arg, "`*args` in a call, from a sequence whose "
                              "length is not known where the function is compiled "
                              + ("(other than the last argument)" if late else
                                 "(into a nested function with defaults)"))
    return out


def known_items(nz, value) -> list | None:
    """The items of `value` if their number is known here: a display, a
    name bound once to one, or `list(...)` / `tuple(...)` of either."""
    def named(name):
        return None if name not in nz.displays else [
            astutil.subscript(astutil.name(name), astutil.const(i))
            for i in range(len(nz.displays[name]))]
    return lift.display_items(value, lambda f: nz.src.resolve(f, nz.locals), named)


def _keyword_params(callee, given: int, written: set) -> list | None:
    """The parameters of a function of the user's that `**kw` must fill
    after `given` positional arguments and the keywords `written`, if
    that is fixed (none has a default; no `**` parameter)."""
    if not isinstance(callee, types.FunctionType):
        return None
    params = list(inspect.signature(callee).parameters.values())
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    left = [p for i, p in enumerate(params) if p.name not in written and
            (p.kind is inspect.Parameter.KEYWORD_ONLY or
             p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and i >= given)]
    if any(p.default is not inspect.Parameter.empty for p in left):
        return None
    return [p.name for p in left]


def _spread_keywords(nz, value, names: list, callee) -> list:
    """`a=kw['a'], ...` after Python's check that `kw` has just those keys."""
    kw = nz.atom(value)
    nz.emit(astutil.expr_stmt(astutil.call(f"{RUNTIME}.check_keywords", [
        astutil.clone(kw), astutil.const(tuple(names)), astutil.const(callee.__name__)])))
    return [(n, astutil.subscript(astutil.clone(kw), astutil.const(n))) for n in names]


def _arity(callee, given: int) -> int | None:
    """How many more positional arguments a function of the user's takes
    after `given`, if that is fixed (no defaults, no `*args`)."""
    if not isinstance(callee, types.FunctionType):
        return None
    params = inspect.signature(callee).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL or
           p.default is not inspect.Parameter.empty for p in params):
        return None
    positional = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    return len(positional) - given if len(positional) >= given else None


def _spread(nz, value, count: int, callee) -> list:
    """`t[0], ..., t[count - 1]` after Python's check that `t` has as
    many items as the function's remaining parameters."""
    seq = nz.atom(value)
    nz.emit(astutil.expr_stmt(astutil.call(f"{RUNTIME}.check_arity", [
        astutil.clone(seq), astutil.const(count), astutil.const(callee.__name__)])))
    return [astutil.subscript(astutil.clone(seq), astutil.const(i)) for i in range(count)]


def _unstar_keywords(nz, keywords: list, late: bool, callee,
                     given: int) -> list:
    """`f(**kw)` for a `kw` whose keys are known (a dict display, or a
    name bound once to one): `f(a=kw['a'], ...)`; for a function of the
    user's whose parameters left have no default, those (after Python's
    check of the keys); a function value's `**kw` stays (dispatch.py)."""
    out = []
    one = sum(kw.arg is None for kw in keywords) == 1
    names = _keyword_params(callee, given, {kw.arg for kw in keywords}) \
        if one else None
    for k in keywords:
        value = k.value
        known = _known_keys(nz, value) if k.arg is None else None
        if k.arg is not None:
            out.append((k.arg, value))
        elif known is not None:
            out.extend(known)
        elif names is not None:
            out.extend(_spread_keywords(nz, value, names, callee))
        else:   # spread when the call runs, where `late` allows; else refused above
            out.append((None, value))
    given = [key for key, _ in out if key is not None]
    twice = sorted({key for key in given if given.count(key) > 1})
    if twice:
        nz.unsupported(keywords[0].value, f"a call that gives the keyword argument "
                          f"`{twice[0]}` twice (Python raises TypeError)")
    return out


def _known_keys(nz, value) -> list | None:
    """(key, value) of a dict whose str keys are known here: a display, a
    name bound once to one, or `dict(a=..., ...)` / `dict(display)`."""
    if isinstance(value, gast.Dict) and all(
            isinstance(key, gast.Constant) and isinstance(key.value, str)
            for key in value.keys):
        return [(key.value, v) for key, v in zip(value.keys, value.values)]
    if isinstance(value, gast.Name) and value.id in nz.keyed:
        return [(key, astutil.subscript(astutil.name(value.id), astutil.const(key)))
                for key in nz.keyed[value.id]]
    if isinstance(value, gast.Call) and nz.src.resolve(value.func, nz.locals) is dict:
        if not value.args and all(k.arg is not None for k in value.keywords):
            return [(k.arg, k.value) for k in value.keywords]
        if len(value.args) == 1 and not value.keywords:
            return _known_keys(nz, value.args[0])
    return None
