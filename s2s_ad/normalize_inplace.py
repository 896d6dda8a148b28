"""In-place updates in A-normal form, and the aliases they must reach.

A mixin of the normalizer (see normalize.py for the grammar).
`x[i] = v` becomes `x = setitem(x, i, v)`, `a += b` becomes `a = iadd(a, b)`
and `items.append(v)` becomes `items = append(items, v, k)`: primitives that
update their first operand in place, as NumPy and Python do, and return it.
Names bound to the same object by plain copies (`y = x`) are tracked; after
an in-place update each alias is rebound to the updated name (`y = x`, or
`if y is x: y = x` for `+=`, which is in place only for mutable values), so
that the analyses see the aliases change too.  Rebinding an alias to the
object it already names does nothing at run time.
"""
from __future__ import annotations

import gast
import numpy

from . import astutil
from .frontend import NUMPY, OPERATORS, RUNTIME

_INPLACE = {gast.Add: "iadd", gast.Sub: "isub", gast.Mult: "imul", gast.Div: "itruediv",
            gast.Pow: "ipow", gast.Mod: "imod", gast.MatMult: "imatmul",
            gast.FloorDiv: "ifloordiv"}


# NumPy functions and ndarray methods that update an argument in place and
# have no functional form here: a gradient through them is a located error.
_OPAQUE_MUTATORS = {"put", "place", "putmask", "partition", "itemset", "resize",
                    "shuffle", "setfield", "byteswap"}


class InPlaceForms:
    """Handlers for in-place updates; relies on the normalizer's `atom`,
    `emit`, `namer`, `_index`, `_stmt`, `origin` and `aliases`."""

    # -- aliases: names bound to one object, for in-place updates ----------
    def _track_alias(self, target: str, value) -> None:
        group = self.aliases.pop(target, None)
        if group is not None:
            group.discard(target)
        if isinstance(value, gast.Name) and value.id != target:
            group = self.aliases.setdefault(value.id, {value.id})
            group.add(target)
            self.aliases[target] = group
        elif _updates_in_place(value, target):
            if group is not None:       # an in-place update keeps the object
                group.add(target)
                self.aliases[target] = group

    def _realias(self, name: str, always: bool) -> None:
        """After an in-place update of `name`, rebind its aliases to it, so
        the analyses see them change too (a no-op for the primal)."""
        for other in sorted(self.aliases.get(name, {name}) - {name}):
            if always:
                self.emit(astutil.assign(other, astutil.name(name)))
                continue
            same = self.namer.temp("same")
            self.emit(astutil.assign(same, gast.Compare(
                left=astutil.name(other), ops=[gast.Is()], comparators=[astutil.name(name)])))
            rebind = astutil.assign(other, astutil.name(name))
            gast.copy_location(rebind, self._stmt)
            self.origin[id(rebind)] = self._stmt
            self.emit(astutil.if_(astutil.name(same), [rebind]))

    def _forget_aliases(self, stmt) -> None:
        """Names a compound statement may rebind lose their alias facts."""
        for name in astutil.stored_names(stmt):
            group = self.aliases.pop(name, None)
            if group is not None:
                group.discard(name)

    def _subscript_target(self, target) -> tuple[str, gast.expr]:
        """`x[i, 1:3]` as an assignment target: (x, the index as a value)."""
        if not isinstance(target.value, gast.Name):
            self._unsupported(target, "assignment into " + astutil.describe(target.value)
                              + " (only `name[index] = value` is supported)")
        return target.value.id, astutil.index_value(self._index(target.slice))

    def _setitem(self, base: str, index, value) -> None:
        """`x[index] = value` in place: `x = setitem(x, index, value)`."""
        self.emit(astutil.assign(base, astutil.call(
            f"{RUNTIME}.setitem", [astutil.name(base), index, value])))
        self._realias(base, always=True)

    def _mutation(self, call: gast.Call) -> bool:
        """Lower a statement-level call that updates an array in place;
        False if `call` is no such call."""
        func = call.func
        method = func.attr if isinstance(func, gast.Attribute) else None
        receiver = func.value.id if method and isinstance(func.value, gast.Name) \
            and func.value.id in self.locals else None
        callee = self.src.resolve(func, self.locals)
        first = call.args[0].id if call.args and isinstance(call.args[0], gast.Name) \
            and call.args[0].id in self.locals else None
        if receiver and method == "append" and len(call.args) == 1 and not call.keywords:
            self._append(receiver, call.args[0])
        elif receiver and method == "fill" and len(call.args) == 1 and not call.keywords:
            self._setitem(receiver, astutil.const(...), self.atom(call.args[0]))
        elif receiver and method == "sort" and not call.args and \
                all(k.arg == "axis" for k in call.keywords):
            self._sort_in_place(receiver, call.keywords)
        elif first and callee is numpy.copyto and len(call.args) == 2 and not call.keywords:
            self._setitem(first, astutil.const(...), self.atom(call.args[1]))
        elif first and callee is numpy.fill_diagonal and len(call.args) == 2 \
                and not call.keywords:
            index = self.atom(astutil.call(f"{RUNTIME}.diagonal_index", [astutil.name(first)]))
            self._setitem(first, index, self.atom(call.args[1]))
        elif (receiver and method in _OPAQUE_MUTATORS) or (first and callable(callee) and
                                                           callee.__name__ in _OPAQUE_MUTATORS):
            target = receiver or first
            self.emit(astutil.assign(target, astutil.call(
                f"{RUNTIME}.mutated", [astutil.name(target), astutil.clone(call)])))
        else:
            return False
        return True

    def _sort_in_place(self, name: str, keywords) -> None:
        """`y.sort(axis=a)`: `y[...] = np.sort(y, axis=a)`."""
        kws = [(k.arg, self.atom(k.value)) for k in keywords]
        value = self.atom(astutil.call(f"{self._numpy_name()}.sort", [astutil.name(name)], kws))
        self._setitem(name, astutil.const(...), value)

    def _numpy_name(self) -> str:
        """The user's name for NumPy (`np`), for code normalization writes."""
        for name in ("np", "numpy"):
            if self.src.globals.get(name) is numpy and name not in self.locals:
                return name
        return NUMPY

    def _append(self, items: str, value) -> None:
        """`items.append(v)` in place, recording where the item lands:
        `k = len(items); items = append(items, v, k)`."""
        item = self.atom(value)
        position = self.namer.temp("at")
        self.emit(astutil.assign(position, astutil.call(astutil.builtin("len"), [astutil.name(items)])))
        self.emit(astutil.assign(items, astutil.call(
            f"{RUNTIME}.append", [astutil.name(items), item, astutil.name(position)])))

    def s_AugAssign(self, stmt: gast.AugAssign) -> None:
        """`a += b` updates arrays in place, as in NumPy: `a = iadd(a, b)`;
        `x[i] += v` reads, adds and stores back into `x`."""
        target = stmt.target
        if isinstance(target, gast.Subscript):
            base, index = self._subscript_target(target)
            old = self.namer.temp()
            self.emit(astutil.assign(old, gast.Subscript(
                value=astutil.name(base), slice=astutil.index_syntax(index),
                ctx=gast.Load())))
            new = self.namer.temp()
            self.emit(astutil.assign(new, astutil.binop(
                astutil.name(old), stmt.op, self.atom(stmt.value))))
            self._setitem(base, index, astutil.name(new))
            return
        if not isinstance(target, gast.Name):
            self._unsupported(stmt, "augmented assignment to " + astutil.describe(target))
        value = self.atom(stmt.value)
        func = _INPLACE.get(type(stmt.op))
        rhs = astutil.call(f"{OPERATORS}.{func}", [astutil.name(target.id), value]) \
            if func else astutil.binop(astutil.name(target.id), stmt.op, value)
        self.emit(astutil.assign(target.id, rhs))
        self._realias(target.id, always=False)


def _updates_in_place(value, target: str) -> bool:
    """`x = setitem(x, ...)` or `x = iadd(x, ...)`: the object stays."""
    return (isinstance(value, gast.Call) and value.args
            and isinstance(value.args[0], gast.Name) and value.args[0].id == target
            and isinstance(value.func, gast.Attribute)
            and astutil.dotted_name(value.func.value) in (RUNTIME, OPERATORS))
