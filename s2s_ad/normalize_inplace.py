"""In-place updates in A-normal form.

A mixin of the normalizer (see normalize.py for the grammar).
`x[i] = v` becomes `x = setitem(x, i, v)`, `a += b` becomes `a = iadd(a, b)`,
`np.add.at(a, i, v)` becomes `a = scatter_add(a, i, v)` and
`items.append(v)` becomes `items = append(items, v, k)`: primitives that
update their first operand in place, as NumPy and Python do, and return it.
After each, `_updated` (normalize_updates.py) emits what makes the names
that share memory with the updated one change too.
"""
from __future__ import annotations

import gast
import numpy

from . import astutil, runtime
from .ir import OPERATORS, RUNTIME
from .alias_parts import Part

_INPLACE = {gast.Add: "iadd", gast.Sub: "isub", gast.Mult: "imul", gast.Div: "itruediv",
            gast.Pow: "ipow", gast.Mod: "imod", gast.MatMult: "imatmul",
            gast.FloorDiv: "ifloordiv"}


# NumPy functions and ndarray methods that update an argument in place and
# have no functional form here: a gradient through them is a located error.
_OPAQUE_MUTATORS = {"put", "place", "putmask", "partition", "itemset", "resize",
                    "shuffle", "setfield", "byteswap"}


class InPlaceForms:
    """Handlers for in-place updates; relies on the normalizer's `atom`,
    `emit`, `namer`, `_index`, `_stmt` and `_updated`."""

    def _subscript_target(self, target) -> tuple[str, gast.expr]:
        """`x[i, 1:3]` as an assignment target: (x, the index as a value).
        `x.T[0]` and `x[1][2]` write through a view of `x`, bound first."""
        base = target.value
        if not isinstance(base, gast.Name):
            if not (isinstance(base, gast.Subscript) or isinstance(base, gast.Attribute)
                    and base.attr == "T"):
                self._unsupported(target, "assignment into " + astutil.describe(base)
                                  + " (only `name[index] = value` is supported)")
            base = self._view_base(base)
        return base.id, astutil.index_value(self._index(target.slice))

    def _setitem(self, base: str, index, value) -> None:
        """`x[index] = value` in place: `x = setitem(x, index, value)`."""
        if not self._is_local(base):
            self._unsupported(self._stmt, f"an in-place update of `{base}`, which is not "
                              "a local variable of the function")
        stmt = astutil.assign(base, astutil.call(
            f"{RUNTIME}.setitem", [astutil.name(base), index, value]))
        self.emit(stmt)
        self._updated(stmt, base, always=True)

    def _mutation(self, call: gast.Call) -> bool:
        """Lower a statement-level call that updates an array in place;
        False if `call` is no such call."""
        func = call.func
        method = func.attr if isinstance(func, gast.Attribute) else None
        receiver = func.value.id if method and isinstance(func.value, gast.Name) \
            and func.value.id in self.locals else None
        if method in ("sort", "fill") and _is_view(func.value):
            receiver = self._view_base(func.value).id   # `y[::-1].sort()`, `y.T.fill(v)`
        callee = self.src.resolve(func, self.locals)
        first = call.args[0].id if call.args and isinstance(call.args[0], gast.Name) \
            and call.args[0].id in self.locals else None
        if self._pop(call) is not None:
            pass
        elif receiver and method == "append" and len(call.args) == 1 and not call.keywords:
            self._append(receiver, call.args[0])
        elif receiver and method == "fill" and len(call.args) == 1 and not call.keywords:
            self._setitem(receiver, astutil.const(...), self.atom(call.args[0]))
        elif receiver and method == "sort" and not call.args and \
                all(k.arg in ("axis", "key", "reverse") for k in call.keywords):
            self._sort_in_place(receiver, call.keywords)
        elif first and callee is numpy.copyto and len(call.args) == 2 and not call.keywords:
            self._setitem(first, astutil.const(...), self.atom(call.args[1]))
        elif first and callee is numpy.fill_diagonal and len(call.args) == 2 \
                and not call.keywords:
            index = self.atom(astutil.call(f"{RUNTIME}.diagonal_index", [astutil.name(first)]))
            self._setitem(first, index, self.atom(call.args[1]))
        elif first and _scatter(callee) and len(call.args) == 3 and not call.keywords:
            self._scatter(first, _scatter(callee), call.args[1], call.args[2])
        elif (receiver and method in _OPAQUE_MUTATORS) or (first and callable(callee) and
                                                           callee.__name__ in _OPAQUE_MUTATORS):
            self._opaque_mutation(receiver or first, call)
        elif _is_ufunc_at(callee) and call.args and _root_name(call.args[0]) in self.locals:
            self._opaque_mutation(_root_name(call.args[0]), call)   # e.g. into a view
        else:
            return False
        return True

    def _opaque_mutation(self, target: str, call: gast.Call) -> None:
        """A call that updates `target` in place and has no functional form:
        `target = mutated(target, call)`, a located error if a gradient must
        flow through it."""
        stmt = astutil.assign(target, astutil.call(
            f"{RUNTIME}.mutated", [astutil.name(target), astutil.clone(call)]))
        self.emit(stmt)
        self._updated(stmt, target, always=True)

    def _scatter(self, base: str, update, index, values) -> None:
        """`np.add.at(base, index, values)` & co., unbuffered and in place:
        `base = scatter_add(base, index, values)`."""
        stmt = astutil.assign(base, astutil.call(
            f"{RUNTIME}.{update.__name__}",
            [astutil.name(base), self._argument(index), self.atom(values)]))
        self.emit(stmt)
        self._updated(stmt, base, always=True)

    def _pop(self, call: gast.Call):
        """`items.pop(i)` on a local list or dict: `v = items[i]` (the value),
        then `items = pop(items, i)` in place; None if `call` is no such call."""
        func = call.func
        if not (isinstance(func, gast.Attribute) and func.attr == "pop" and
                isinstance(func.value, gast.Name) and func.value.id in self.locals
                and len(call.args) <= 1 and not call.keywords):
            return None
        items = func.value.id
        index = self.atom(call.args[0]) if call.args else astutil.const(-1)
        value = self.namer.temp("pop")
        self.emit(astutil.assign(value, astutil.subscript(
            astutil.name(items), astutil.clone(index))))
        stmt = astutil.assign(items, astutil.call(
            f"{RUNTIME}.pop", [astutil.name(items), astutil.clone(index)]))
        self.emit(stmt)
        for _, part in self._views_of({items}):
            part.certain = False        # its items moved: which index is which?
        self._updated(stmt, items, always=True, moves_items=True)
        return astutil.name(value)

    def _sort_in_place(self, name: str, keywords) -> None:
        """`y.sort(...)` of an array or a list: `y[:] = sort_like(y, ...)`."""
        kws = [(k.arg, self.atom(k.value)) for k in keywords]
        value = self.atom(astutil.call(f"{RUNTIME}.sort_like", [astutil.name(name)], kws))
        self._setitem(name, astutil.call(astutil.builtin("slice"), [astutil.const(None)]),
                      value)

    def _append(self, items: str, value) -> None:
        """`items.append(v)` in place, recording where the item lands:
        `k = len(items); items = append(items, v, k)`."""
        item = self.atom(value)
        position = self.namer.temp("at")
        self.emit(astutil.assign(position, astutil.call(astutil.builtin("len"), [astutil.name(items)])))
        stmt = astutil.assign(items, astutil.call(
            f"{RUNTIME}.append", [astutil.name(items), item, astutil.name(position)]))
        self.emit(stmt)
        self._updated(stmt, items, always=True, moves_items=True)
        if isinstance(item, gast.Name) and item.id != items and self._is_local(item.id):
            # the item is a part of the list, as an item of a display is
            self.parts.setdefault(item.id, []).append(Part(items, "index", astutil.subscript(
                astutil.name(items), astutil.name(position)), item=True))

    def s_AugAssign(self, stmt: gast.AugAssign) -> None:
        """`a += b` updates arrays in place, as in NumPy: `a = iadd(a, b)`;
        `x[i] += v` reads, adds and stores back into `x`."""
        target = stmt.target
        if isinstance(target, gast.Subscript):
            # as Python does: the item is augmented (in place if it is an
            # array) and stored back
            base, index = self._subscript_target(target)
            item = self.namer.temp()
            self.emit(astutil.assign(item, astutil.subscript(
                astutil.name(base), astutil.index_syntax(index))))
            for other in sorted(self.joined.get(base, ())):    # `+`/`*` shared its items
                self._refuse_shared(item, Part(other, "reshape", astutil.name(other)),
                                    "is updated in place, an item another list holds too,")
            self._augment(item, stmt.op, self.atom(stmt.value))
            self._setitem(base, index, astutil.name(item))
            return
        if not isinstance(target, gast.Name):
            self._unsupported(stmt, "augmented assignment to " + astutil.describe(target))
        self._augment(target.id, stmt.op, self.atom(stmt.value))

    def _own_operand(self, name: str, value):
        """`value`, copied first (`rt.keep`, whose adjoint is the identity)
        if it may share memory with `name`, which the update overwrites:
        NumPy reads such an operand before writing, and so must the adjoint."""
        if isinstance(value, gast.Name) and value.id in self._related(name):
            return self.atom(astutil.call(f"{RUNTIME}.keep", [value]))
        return value

    def _augment(self, name: str, op, value) -> None:
        """`name op= value`: `name = iadd(name, value)`, in place for arrays
        (an operand sharing its memory copied first: `z = v; v *= z`)."""
        value = self._own_operand(name, value)
        func = _INPLACE.get(type(op))
        rhs = astutil.call(f"{OPERATORS}.{func}", [astutil.name(name), value]) \
            if func else astutil.binop(astutil.name(name), op, value)
        update = astutil.assign(name, rhs)
        self.emit(update)
        self._updated(update, name, always=False)


def _is_ufunc_at(callee) -> bool:
    """Whether `callee` is a ufunc's `.at` method (`np.add.at`)."""
    return isinstance(getattr(callee, "__self__", None), numpy.ufunc) and \
        getattr(callee, "__name__", None) == "at"


def _is_view(expr) -> bool:
    """`x[...]` or `x.T`: an expression that may be a view of a local."""
    return isinstance(expr, gast.Subscript) or \
        isinstance(expr, gast.Attribute) and expr.attr == "T"


def _scatter(callee):
    """The runtime primitive for `np.add.at` & co., or None."""
    return runtime.SCATTERS.get(callee.__self__) if _is_ufunc_at(callee) else None


def _root_name(node) -> str | None:
    """`a` for `a`, `a[i]`, `a.T`, `a[i].T`, ...; None otherwise."""
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None

