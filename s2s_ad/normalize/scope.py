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

import gast

from .. import astutil, scopes, traversal
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


def e_Lambda(nz, expr):
    """A lambda used as a value (`rk4_step(lambda y: -y, y0, dt)`)."""
    lift_nested(nz, expr, "lambda")
    return function_value(nz, gast.copy_location(astutil.name("lambda"), expr))


def function_value(nz, ref: gast.Name) -> gast.expr:
    """A nested function used as a value, not called here: its lifted
    function, with the enclosing values it reads bound (`rt.bind`).
    Python reads those when the function runs, so each must keep the
    value it has here: a name bound nowhere after this statement (nor in
    it, nor in a loop around it).  The lifted function has no defaults
    (they are passed at each call it makes here): one with defaults is
    refused."""
    lifted = nz.nested[ref.id]
    shown = "a lambda" if ref.id == "lambda" else f"the nested function `{ref.id}`"
    if lifted.defaults:
        nz.unsupported(ref, f"{shown} used as a value, with default arguments")
    for name in lifted.free:
        if name not in nz.locals:
            continue
        if _bound_later(nz, name):
            user = nz.renamed.get(name, name)
            raise UnsupportedSyntaxError(
                f"{shown} is used as a value and reads `{user}`, which is assigned "
                "again after it is made (or in a loop around it); Python reads it "
                "when the function runs, which s2s_ad does not follow",
                nz.src.locate(ref),
                hint=f"pass `{user}` as an argument of the function instead")
    if not lifted.free:
        return astutil.name(lifted.name)
    return astutil.call(f"{RUNTIME}.bind", [astutil.name(lifted.name)],
                        [(n, astutil.name(n)) for n in lifted.free])


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
