"""Calls in A-normal form.

Functions over the normalizer's state `nz` (__init__.py has the grammar).  A call
becomes `f(atoms...)`: `*t` of a known length and `**kw` of known keys are
spread (spread.py), tuple and list literal arguments stay literals of atoms, a nested function or lambda is
called as its lifted function with what it reads, `items.pop(i)` is an
in-place update, and a NumPy `out=y` writes the result into `y` as
`y[...] = f(...)`.
"""
from __future__ import annotations

import functools

import gast

from .. import astutil, frontend, out_args
from ..ir import RUNTIME, is_resolved
from ..rules import registry
from . import compound, comprehensions, exprs, inplace, mutators, scope, spread, updating


def _as_display(nz, expr, callee):
    """The display a call of `dict`, `list` or `tuple` builds, whose items
    the alias analysis relates (`dict(a=x)`: `{"a": x}`; `list((a, b))`:
    `[a, b]`; `dict([("a", x)])`: `{"a": x}`), or None."""
    if callee is dict and not expr.args and expr.keywords and \
            all(k.arg is not None for k in expr.keywords):
        return astutil.dict_([astutil.const(k.arg) for k in expr.keywords],
                             [k.value for k in expr.keywords])
    if (callee is list or callee is tuple) and len(expr.args) == 1 and not expr.keywords \
            and isinstance(expr.args[0], (gast.List, gast.Tuple)) and \
            not any(isinstance(e, gast.Starred) for e in expr.args[0].elts):
        make = astutil.list_ if callee is list else astutil.tuple_
        return make(expr.args[0].elts)
    pairs = _dict_pairs(nz, expr) if callee is dict else None
    if pairs is not None:
        return astutil.dict_([k for k, _ in pairs], [v for _, v in pairs])
    return None


def e_Call(nz, expr):
    """A call in ANF (see the module docstring)."""
    popped = inplace.pop(nz, expr)
    if popped is not None:
        return popped
    if _is_get(nz, expr):
        return _get(nz, expr)
    callee = nz.src.resolve(expr.func, nz.locals)
    display = _as_display(nz, expr, callee)
    if display is not None:
        return nz.rhs(gast.copy_location(display, expr))
    if comprehensions.is_reduce(nz, expr, callee):
        return comprehensions.reduced(nz, expr)
    late, expr = spread.spread_arguments(nz, expr, callee)
    _refuse_overwrite(nz, expr, callee)
    expr = _out_by_keyword(nz, expr, callee)
    mutators.refuse_as_value(nz, expr, callee)
    out = next((k.value for k in expr.keywords if k.arg == "out"), None)
    if out is not None and _writes_out(nz, expr):   # y[...] = f(x), value y
        if not inplace.writable(nz, out):
            nz.unsupported(out, "`out=` that is neither a local variable nor a view "
                                "of one (`out=y`, `out=y[2:]`)")
        kept = [k for k in expr.keywords if k.arg != "out"]
        value = nz.atom(gast.copy_location(
            astutil.call(expr.func, expr.args, kept), expr))
        inplace.write_into(nz, out, value)
        return astutil.name(out.id) if isinstance(out, gast.Name) else \
            nz.atom(astutil.clone(out))
    if sum(k.arg is None for k in expr.keywords) > (1 if late else 0):
        nz.unsupported(expr, ("several `**kwargs` in a call" if late else
                                 "`**kwargs` in a call of a nested function with defaults")
                          + ", of dicts whose keys are not known where the function "
                          "is compiled")
    call = _call_of_atoms(nz, expr)
    return updating.updating_call(nz, call, callee, expr) or call


def _refuse_overwrite(nz, call, callee) -> None:
    """A library function told it may overwrite its array arguments
    (SciPy's `overwrite_a=True`) updates them in place where their layout
    lets it, which s2s_ad cannot follow: refused, unless they are not
    locals."""
    flags = [k for k in call.keywords if k.arg and k.arg.startswith("overwrite_")
             and not (isinstance(k.value, gast.Constant) and k.value.value is False)]
    passed = [a for a in [*call.args, *(k.value for k in call.keywords)]
              if isinstance(a, gast.Name) and a.id in nz.locals]
    if flags and passed and is_resolved(callee) and frontend.from_library(callee) and \
            registry.lookup(callee) is None:        # (a rule says what it does not cover)
        nz.unsupported(call, f"a call with `{flags[0].arg}=...`, which may overwrite "
                             f"`{passed[0].id}` in place (pass a copy, or drop it)")


def _dict_pairs(nz, call) -> list | None:
    """`_pairs_display` of a `dict(...)` call, its argument's callee resolved."""
    arg = call.args[0] if call.args else None
    inner = nz.src.resolve(arg.func, nz.locals) if isinstance(arg, gast.Call) else None
    return _pairs_display(call, inner)


def _is_get(nz, call) -> bool:
    """`items.get(key)` or `items.get(key, default)` on a local name."""
    func = call.func
    return isinstance(func, gast.Attribute) and func.attr == "get" and \
        isinstance(func.value, gast.Name) and func.value.id in nz.locals and \
        1 <= len(call.args) <= 2 and not call.keywords and \
        not any(isinstance(a, gast.Starred) for a in call.args)


def _get(nz, call):
    """`items.get(key, default)` as `items[key] if has_key(items, key)
    else get_other(default, items, key)` (both arguments evaluated
    first, as Python does), so that to the alias analysis too the value
    is an item of the dict or the default (runtime/sequences.py)."""
    items = call.func.value.id
    key = nz.atom(call.args[0])
    default = nz.atom(call.args[1]) if len(call.args) == 2 else astutil.const(None)
    test = nz.atom(astutil.call(f"{RUNTIME}.has_key", [astutil.name(items), key]))
    value = nz.namer.temp("get")
    body, orelse = compound.branches(nz, 
        lambda: nz.capture(lambda: nz.emit(astutil.assign(value, nz.rhs(
            astutil.subscript(astutil.name(items), astutil.clone(key)))))),
        lambda: nz.capture(lambda: nz.emit(astutil.assign(value, nz.rhs(
            astutil.call(f"{RUNTIME}.get_other", [default, astutil.name(items),
                                                  astutil.clone(key)]))))))
    exprs.emit_branch(nz, astutil.if_(test, body, orelse))
    return astutil.name(value)


def _call_of_atoms(nz, expr):
    """`f(atoms...)` for a call whose arguments are spread: a nested
    function or lambda called as its lifted function, its callee an atom."""
    lifted = scope.lift_nested(nz, expr.func, "lambda") if isinstance(expr.func, gast.Lambda) \
        else nz.nested.get(getattr(expr.func, "id", None))
    if lifted is not None:          # call the lifted function, passing what it reads
        expr = gast.copy_location(lifted.call(expr.args, list(expr.keywords), functools.partial(
            spread.known_items, nz), nz.unsupported), expr)
    callee = nz.src.resolve(expr.func, nz.locals)
    consumed = scope.consumed(nz, expr, callee)
    if is_resolved(callee):
        func = astutil.clone(expr.func)
    elif isinstance(expr.func, gast.Attribute):
        func = astutil.attribute(nz.atom(expr.func.value), expr.func.attr)
    else:
        func = nz.atom(expr.func)
    args = [argument(nz, a, a in consumed) for a in expr.args]
    kws = [(k.arg, argument(nz, k.value, k.value in consumed)) for k in expr.keywords]
    return astutil.call(func, args, kws)


def _out_by_keyword(nz, call, callee):
    """`np.exp(x, y)`, `np.add(a, b, y)`, `np.sum(a, 0, None, y)` or
    `x.sum(0, None, y)`: the positional argument that binds `out`, passed by
    keyword (`out=y`, a tuple of them for a ufunc with several outputs; the
    arguments after it by their names), so that the write into `y` is
    followed as `out=y` is; `out=None` dropped."""
    names = _positional_names(nz, call, callee)
    at = out_args.out_position(names)
    keyword = any(k.arg == "out" for k in call.keywords)
    if at is not None and any(isinstance(a, gast.Starred) for a in call.args[:at + 1]) \
            and not keyword:
        nz.unsupported(call, "a spread `*...` of a length not known here in a call whose "
                             "`out` it may fill (a write into an array s2s_ad would not "
                             "see); pass the arguments one by one")
    if at is not None and len(call.args) > at and \
            not any(isinstance(a, gast.Starred) for a in call.args):
        count = names.count("out")
        outs, rest = call.args[at:at + count], call.args[at + count:]
        if len(rest) > len(names) - at - count or _is_none(outs[0]) and rest:
            return call                 # (more than it takes: Python raises)
        out = outs[0] if count == 1 else gast.copy_location(astutil.tuple_(outs), outs[0])
        call = gast.copy_location(astutil.call(call.func, call.args[:at], [
            *call.keywords, ("out", out),
            *zip(names[at + count:], rest)]), call)
    if any(k.arg == "out" and _is_none(k.value) for k in call.keywords) and \
            _writes_out(nz, call):          # `out=None`: NumPy's default, a new array
        call = gast.copy_location(astutil.call(call.func, call.args, [
            k for k in call.keywords if k.arg != "out"]), call)
    return call


def passes_out(nz, call) -> bool:
    """Whether a NumPy call is given `out` (not None), by keyword or by
    position."""
    at = out_args.out_position(_positional_names(nz, call, nz.src.resolve(call.func, nz.locals)))
    return any(k.arg == "out" and not _is_none(k.value) for k in call.keywords) or \
        at is not None and len(call.args) > at and not _is_none(call.args[at])


def _is_none(node) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def _positional_names(nz, call, callee) -> list | None:
    """The parameters a NumPy call fills by position (out_args.py)."""
    if not _writes_out(nz, call):
        return None
    if not is_resolved(callee):         # `x.sum(...)` reads like `np.sum(x, ...)`
        return out_args.positional_names(None, call.func.attr)
    return out_args.positional_names(callee)


def _writes_out(nz, call) -> bool:
    """A NumPy function or method, whose `out=y` writes its result into y
    (a function of the user's may have a parameter named `out`)."""
    callee = nz.src.resolve(call.func, nz.locals)
    if not is_resolved(callee):         # an ndarray method: `x.sum(out=y)`
        return isinstance(call.func, gast.Attribute)
    return getattr(callee, "__module__", None) in (None, "numpy") or \
        str(getattr(callee, "__module__", "")).startswith("numpy") or \
        type(callee).__name__ == "ufunc"


def argument(nz, expr, consumed: bool = False):
    """An atom, a tuple/list literal of atoms (`np.stack((a, b))`), `*atom`,
    or a function value the callee only calls (`consumed`: scope.consumed)."""
    if consumed:
        return nz.atom(scope.e_Lambda(nz, expr, True) if isinstance(expr, gast.Lambda)
                       else scope.function_value(nz, expr, True))
    if isinstance(expr, gast.Starred):
        return astutil.starred(nz.atom(expr.value))
    if isinstance(expr, (gast.Tuple, gast.List)) and not nz.is_atom(expr):
        build = astutil.tuple_ if isinstance(expr, gast.Tuple) else astutil.list_
        return build([argument(nz, e) for e in expr.elts])
    return nz.atom(expr)


def _pairs_display(call: gast.Call, inner) -> list | None:
    """The (key, value) expressions of `dict([(k, v), ...])` (a list or
    tuple display of pair displays), or of `dict(zip([k, ...], [v, ...]))`
    with literal keys (`inner`: what the argument calls), else None."""
    if len(call.args) != 1 or call.keywords:
        return None
    arg = call.args[0]
    displays = (gast.List, gast.Tuple)
    if inner is zip and len(arg.args) == 2 and not arg.keywords and \
            all(isinstance(a, displays) for a in arg.args):
        keys, values = arg.args[0].elts, arg.args[1].elts
        if len(keys) == len(values) and all(isinstance(k, gast.Constant) for k in keys) \
                and not any(isinstance(v, gast.Starred) for v in values):
            return list(zip(keys, values))      # (keys first or not: the same)
        return None
    if not isinstance(arg, displays) or not all(
            isinstance(e, gast.Tuple) and len(e.elts) == 2 and
            not any(isinstance(p, gast.Starred) for p in e.elts) for e in arg.elts):
        return None
    return [(e.elts[0], e.elts[1]) for e in arg.elts]
