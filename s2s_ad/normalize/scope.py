"""Names a function binds when it is compiled: nested functions and imports.

Functions over the normalizer's state `nz` (__init__.py).  A nested `def` (or a lambda
bound to a name) is lifted out by lift.py and calls to it go to the lifted
function; `import` statements inside the function are resolved at compile
time.  Both record the objects in `Source.lifted`, where name resolution and
code generation find them (imports through `Source.bind_import`, which also
notes where each came from, for the staleness guard).
"""
from __future__ import annotations

import importlib
import inspect
import types

import gast

from .. import astutil, effects, frontend, scopes, traversal
from . import lift
from ..errors import UnsupportedSyntaxError
from ..ir import RUNTIME


def s_FunctionDef(nz, stmt: gast.FunctionDef) -> None:
    if stmt.decorator_list:
        nz.unsupported(stmt, "a decorated nested function")
    lift_nested(nz, stmt, stmt.name)


def lift_nested(nz, node, name: str) -> lift.Lifted:
    """Lift a nested function out; calls to `name` go to the lifted one."""
    defaults = _defaults(nz, node.args)
    lifted = lift.lift(node, nz.namer.fresh(name + "_lifted"), nz.src, nz.locals,
                       dict(nz.nested), defaults)
    nz.src.lifted[lifted.name] = lifted.func
    nz.nested[name] = lifted
    return lifted


def e_Lambda(nz, expr, consumed: bool = False):
    """A lambda used as a value (`rk4_step(lambda y: -y, y0, dt)`);
    `consumed`: see `function_value`."""
    lift_nested(nz, expr, "lambda")
    return function_value(nz, gast.copy_location(astutil.name("lambda"), expr), consumed)


def function_value(nz, ref: gast.Name, consumed: bool = False) -> gast.expr:
    """A nested function used as a value, not called here: its lifted
    function, with the enclosing values it reads bound (`rt.bind`).
    Python reads those when the function runs, so each must keep the
    value it has here: a name bound nowhere after this statement (nor in
    it, nor in a loop around it), unless the function is `consumed`: an
    argument of a call that only calls it while it runs (`consumed`), when
    the values are those of this statement (a walrus in it is refused).
    The lifted function has no defaults (they are passed at each call it
    makes here): one with defaults is refused."""
    lifted = nz.nested[ref.id]
    shown = "a lambda" if ref.id == "lambda" else f"the nested function `{ref.id}`"
    if lifted.defaults:
        nz.unsupported(ref, f"{shown} used as a value, with default arguments")
    for name in lifted.free:
        if name not in nz.locals:
            continue
        if _stored_in(nz.user_stmt, name) if consumed else _bound_later(nz, name):
            user = nz.renamed.get(name, name)
            raise UnsupportedSyntaxError(
                f"{shown} is used as a value and reads `{user}`, which is assigned "
                "again after it is made (or in a loop around it); Python reads it "
                "when the function runs, which s2s_ad does not follow",
                nz.src.locate(ref),
                hint=f"pass `{user}` as an argument of the function instead")
    if not lifted.free:
        return astutil.name(lifted.name)
    return astutil.call(f"{RUNTIME}.bind", [astutil.name(lifted.name), astutil.const(
        lifted.free)] + [astutil.name(n) for n in lifted.free])


def consumed(nz, call: gast.Call, callee) -> set:
    """The lambdas and nested functions among `call`'s arguments that
    `callee` only calls, before it returns: the `key` of `sorted`, `min`
    and `max`, and an argument of a helper of the user's (not a generator)
    whose parameter its body only calls (`f(x)`), never stores, returns,
    passes on or reads in a nested function or generator expression."""
    values = [a for a in [*call.args, *(k.value for k in call.keywords)]
              if isinstance(a, gast.Lambda) or isinstance(a, gast.Name) and a.id in nz.nested]
    if not values:
        return set()
    if any(callee is f for f in (sorted, min, max)):
        return {k.value for k in call.keywords if k.arg == "key" and k.value in values}
    fdef = effects.parsed(callee.__code__) if isinstance(callee, types.FunctionType) \
        and not frontend.is_library(callee) else None
    if fdef is None or any(isinstance(a, gast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords):
        return set()
    signature = inspect.signature(callee)
    try:
        bound = signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError:
        return set()
    return {value for param, value in bound.arguments.items() if value in values
            and signature.parameters[param].kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                         inspect.Parameter.VAR_KEYWORD)
            and _only_called(fdef, param)}


_LATER = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.GeneratorExp,
          gast.Yield, gast.YieldFrom, gast.Await)


def _only_called(fdef, param: str) -> bool:
    """Whether `fdef`'s body reads `param` only as what it calls, and runs
    nothing later that could (a nested function, a generator)."""
    nodes = traversal.nodes(fdef.body)
    if any(isinstance(n, _LATER) for n in nodes):
        return False
    called = {id(n.func) for n in nodes if isinstance(n, gast.Call)}
    return all(id(n) in called and isinstance(n.ctx, gast.Load)
               for n in nodes if isinstance(n, gast.Name) and n.id == param)


def _stored_in(stmt, name: str) -> bool:
    """Whether `stmt` binds `name` by a walrus."""
    return any(isinstance(n, gast.NamedExpr) and n.target.id == name
               for n in traversal.walk(stmt))


def _bound_later(nz, name: str) -> bool:
    """Whether the user's code may bind `name` after the statement being
    normalized starts: a store in it or after it, or in a loop around it."""
    if name in nz.renamed:        # a comprehension's variable: a loop's
        return name in nz.loop_stored
    here = (nz.user_stmt.lineno, nz.user_stmt.col_offset)
    if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
           and (n.lineno, n.col_offset) >= here for n in traversal.walk(nz.src.tree)):
        return True
    return any(name in scopes.stored_names(loop) for loop in nz.loops)


def _defaults(nz, args) -> dict:
    """A nested function's defaults, evaluated here, where it is defined,
    in order: parameter -> a literal, or a fresh local holding the value
    (`k_default = k`), so later rebinding of `k` does not change it."""
    positional = list(args.posonlyargs) + list(args.args)
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    out = {}
    for param, default in pairs:
        if isinstance(default, gast.Constant) or astutil.is_number(default):
            out[param.id] = astutil.clone(default)
            continue
        ident = nz.namer.fresh(param.id + "_default")
        nz.emit(astutil.assign(ident, nz.rhs(default)))
        out[param.id] = astutil.name(ident)
    return out


def s_Import(nz, stmt) -> None:
    """`import a.b as c` inside the function binds `c` at compile time."""
    for alias in stmt.names:
        module = _import_module(nz, alias.name, stmt)
        if alias.asname:
            nz.src.bind_import(alias.asname, module, alias.name)
        else:
            head = alias.name.split(".")[0]
            nz.src.bind_import(head, _import_module(nz, head, stmt), head)


def s_ImportFrom(nz, stmt) -> None:
    """`from m import x as y` inside the function binds `y` at compile time."""
    if stmt.level:
        nz.unsupported(stmt, "a relative import inside the function")
    module = _import_module(nz, stmt.module, stmt)
    for alias in stmt.names:
        if alias.name == "*" or not hasattr(module, alias.name):
            nz.unsupported(stmt, f"`from {stmt.module} import {alias.name}`")
        nz.src.bind_import(alias.asname or alias.name, getattr(module, alias.name),
                             stmt.module, alias.name)


def _import_module(nz, name: str, stmt):
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise UnsupportedSyntaxError(f"cannot import {name!r} ({exc})",
                                     nz.src.locate(stmt),
                                     hint="import it at module level") from None
