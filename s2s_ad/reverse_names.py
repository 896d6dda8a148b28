"""How an adjoint function names what it uses (a mixin of reverse._Reverser).

Everything generated code reads that the user's code did not define is an
*import*: a value passed into the derived function's closure by code
generation (`rt`, `np`, `math`, the builtins, lifted nested functions, the
callees' adjoint pairs).  An import keeps its usual name (`np`, `range`)
when that name means the same object to the user's function, or when the
function cannot see the name at all; otherwise it gets a fresh alias
(`range_1` next to a parameter called `range`).  Because imports live in the
closure, a module global rebound later cannot capture them either.

The adjoint function's own name (`df`) and, for a callee, its pair's names
(`f_fwd`, `f_bwd`) and the backward function's parameter (`saved`) come from
the same `Namer`, so none of them captures a name the callee reads.
"""
from __future__ import annotations

import builtins
import operator

import gast
import numpy

from . import astutil, runtime, traversal
from .ir import NUMPY, OPERATORS, RUNTIME

_RESERVED = {RUNTIME: ("rt", runtime), NUMPY: ("np", numpy),
             OPERATORS: ("operator", operator)}


class Naming:
    """Relies on the reverser's `src`, `norm`, `namer` and `imports`."""

    def _import(self, preferred: str, obj) -> str:
        """The identifier under which the derived function reads `obj`."""
        for ident, known in self.imports.items():
            if known is obj:
                self.namer.reserve(ident)   # again: a loop's fixpoint may have
                return ident                # restored the namer since
        ident = preferred
        user = self.src.resolve(astutil.name(preferred), self.norm.locals)
        if ident in self.imports or self.namer.taken(ident) and user is not obj:
            ident = self.namer.fresh(preferred)
        self.namer.reserve(ident)
        self.imports[ident] = obj
        return ident

    def own_names(self, mode: str) -> tuple:
        """(adjoint function name, pair names): the pair names are None
        outside "pair" mode, else (forward name, backward name, the backward
        function's saved-state parameter).  Chosen before any other name,
        so they read as the user's function's name plus a suffix."""
        stem = self.src.tree.name if self.src.tree.name != "<lambda>" else "lambda"
        name = self.namer.fresh("d" + stem)
        if mode != "pair":
            return name, None
        return name, (self.namer.fresh(stem + "_fwd"), self.namer.fresh(stem + "_bwd"),
                      self.namer.fresh("saved"))

    def name_reserved(self, fdef) -> None:
        """Code that normalization and the sweeps wrote refers to s2s_ad's own
        modules and to builtins by reserved names (`__s2s_ad_np__.sort`,
        `__s2s_ad_builtins__.range`); print them as imports."""
        def printed(node):
            kind = type(node)
            if kind is gast.Name and node.id in _RESERVED:
                node.id = self._import(*_RESERVED[node.id])
            elif kind is gast.Attribute:
                ident = astutil.builtin_name(node)
                if ident is not None:
                    return astutil.name(self._import(ident, getattr(builtins, ident)))
            return node
        traversal.rewrite_children(fdef, printed)

