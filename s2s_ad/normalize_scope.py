"""Names a function binds when it is compiled: nested functions and imports.

A mixin of the normalizer (see normalize.py).  A nested `def` (or a lambda
bound to a name) is lifted out by lift.py and calls to it go to the lifted
function; `import` statements inside the function are resolved at compile
time.  Both record the objects in `Source.lifted`, where name resolution and
code generation find them (imports through `Source.bind_import`, which also
notes where each came from, for the staleness guard).
"""
from __future__ import annotations

import importlib

import gast

from . import astutil, lift, scopes, traversal
from .errors import UnsupportedSyntaxError
from .ir import RUNTIME


class ScopeForms:
    """Relies on the normalizer's `src`, `namer`, `locals`, `nested` and
    `_unsupported`."""

    def s_FunctionDef(self, stmt: gast.FunctionDef) -> None:
        if stmt.decorator_list:
            self._unsupported(stmt, "a decorated nested function")
        self._lift(stmt, stmt.name)

    def _lift(self, node, name: str) -> lift.Lifted:
        """Lift a nested function out; calls to `name` go to the lifted one."""
        defaults = self._defaults(node.args)
        lifted = lift.lift(node, self.namer.fresh(name + "_lifted"), self.src, self.locals,
                           dict(self.nested), defaults)
        self.src.lifted[lifted.name] = lifted.func
        self.nested[name] = lifted
        return lifted

    def e_Lambda(self, expr):
        """A lambda used as a value (`rk4_step(lambda y: -y, y0, dt)`)."""
        self._lift(expr, "lambda")
        return self._function_value(gast.copy_location(astutil.name("lambda"), expr))

    def _function_value(self, ref: gast.Name) -> gast.expr:
        """A nested function used as a value, not called here: its lifted
        function, with the enclosing values it reads bound (`rt.bind`).
        Python reads those when the function runs, so each must keep the
        value it has here: a name bound nowhere after this statement (nor in
        it, nor in a loop around it).  The lifted function has no defaults
        (they are passed at each call it makes here): one with defaults is
        refused."""
        lifted = self.nested[ref.id]
        shown = "a lambda" if ref.id == "lambda" else f"the nested function `{ref.id}`"
        if lifted.defaults:
            self._unsupported(ref, f"{shown} used as a value, with default arguments")
        for name in lifted.free:
            if name not in self.locals:
                continue
            if self._bound_later(name):
                user = self.renamed.get(name, name)
                raise UnsupportedSyntaxError(
                    f"{shown} is used as a value and reads `{user}`, which is assigned "
                    "again after it is made (or in a loop around it); Python reads it "
                    "when the function runs, which s2s_ad does not follow",
                    self.src.locate(ref),
                    hint=f"pass `{user}` as an argument of the function instead")
        if not lifted.free:
            return astutil.name(lifted.name)
        return astutil.call(f"{RUNTIME}.bind", [astutil.name(lifted.name)],
                            [(n, astutil.name(n)) for n in lifted.free])

    def _bound_later(self, name: str) -> bool:
        """Whether the user's code may bind `name` after the statement being
        normalized starts: a store in it or after it, or in a loop around it."""
        if name in self.renamed:        # a comprehension's variable: a loop's
            return name in self.loop_stored
        here = (self._stmt.lineno, self._stmt.col_offset)
        if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
               and (n.lineno, n.col_offset) >= here for n in traversal.walk(self.src.tree)):
            return True
        return any(name in scopes.stored_names(loop) for loop in self.loops)

    def _defaults(self, args) -> dict:
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
            ident = self.namer.fresh(param.id + "_default")
            self.emit(astutil.assign(ident, self.rhs(default)))
            out[param.id] = astutil.name(ident)
        return out

    def s_Import(self, stmt) -> None:
        """`import a.b as c` inside the function binds `c` at compile time."""
        for alias in stmt.names:
            module = self._import_module(alias.name, stmt)
            if alias.asname:
                self.src.bind_import(alias.asname, module, alias.name)
            else:
                head = alias.name.split(".")[0]
                self.src.bind_import(head, self._import_module(head, stmt), head)

    def s_ImportFrom(self, stmt) -> None:
        """`from m import x as y` inside the function binds `y` at compile time."""
        if stmt.level:
            self._unsupported(stmt, "a relative import inside the function")
        module = self._import_module(stmt.module, stmt)
        for alias in stmt.names:
            if alias.name == "*" or not hasattr(module, alias.name):
                self._unsupported(stmt, f"`from {stmt.module} import {alias.name}`")
            self.src.bind_import(alias.asname or alias.name, getattr(module, alias.name),
                                 stmt.module, alias.name)

    def _import_module(self, name: str, stmt):
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            raise UnsupportedSyntaxError(f"cannot import {name!r} ({exc})",
                                         self.src.locate(stmt),
                                         hint="import it at module level") from None
