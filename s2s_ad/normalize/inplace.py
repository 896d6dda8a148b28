"""In-place updates in A-normal form.

Functions over the normalizer's state `nz` (__init__.py has the grammar).
`x[i] = v` becomes `x = setitem(x, i, v)`, `a += b` becomes `a = iadd(a, b)`,
`np.add.at(a, i, v)` becomes `a = scatter_add(a, i, v)` and
`items.append(v)` becomes `items = append(items, v, k)`: primitives that
update their first operand in place, as NumPy and Python do, and return it.
After each, `after_update` (normalize/writebacks.py) emits what makes the names
that share memory with the updated one change too.
"""
from __future__ import annotations

import types

import gast
import numpy

from .. import astutil, effects, runtime, traversal
from ..ir import MUTATING_METHODS, NUMPY, OPERATORS, RUNTIME
from .alias_parts import Part
from . import aliasing, calls, mutators, refusals, sequences, writebacks


_INPLACE = {gast.Add: "iadd", gast.Sub: "isub", gast.Mult: "imul", gast.Div: "itruediv",
            gast.Pow: "ipow", gast.Mod: "imod", gast.MatMult: "imatmul",
            gast.FloorDiv: "ifloordiv"}


def subscript_target(nz, target) -> tuple[str, gast.expr]:
    """`x[i, 1:3]` as an assignment target: (x, the index as a value).
    `x.T[0]`, `x[1][2]` and `x.flat[i]` write through a view of `x`, bound
    first."""
    base = target.value
    if isinstance(base, gast.Attribute) and base.attr == "flat" and \
            isinstance(base.value, gast.Name):      # through a flat view of it
        base = aliasing.view_base(nz, refusals.flat_view(nz, base.value.id))
    if not isinstance(base, gast.Name):
        if not (isinstance(base, gast.Subscript) or isinstance(base, gast.Attribute)
                and base.attr == "T"):
            nz.unsupported(target, "assignment into " + astutil.describe(base)
                              + " (only `name[index] = value` is supported)")
        base = aliasing.view_base(nz, base)
    return base.id, astutil.index_value(nz.index(target.slice))


def setitem(nz, base: str, index, value, replaces: bool = True, last: bool = False) -> None:
    """`x[index] = value` in place: `x = setitem(x, index, value)`;
    `replaces`: the value may be another object than the one in a list's
    slot (not `x[i] += v`, which stores back the item it read, in place
    if it is an array); `last`: the user's statement's last operation."""
    if not aliasing.is_local(nz, base):
        nz.unsupported(nz.user_stmt, f"an in-place update of `{base}`, which is not "
                          "a local variable of the function")
    if isinstance(value, gast.Name) and value.id != base and \
            base in aliasing.related(nz, value.id) and not _row_of(nz, base, index, value.id):
        refusals.overwrite(nz, base, index, value.id)     # (`y[2] = y[:, 3]`)
    stmt = astutil.assign(base, astutil.call(
        f"{RUNTIME}.setitem", [astutil.name(base), index, value]))
    nz.emit(stmt)
    writebacks.after_update(nz, stmt, base, always=True, moves_items=_keeps_items(nz, base),
                            last=last)
    if replaces:
        sequences.slot_replaced(nz, base, index)
    sequences.note_stored(nz, base, index, value)


def _keeps_items(nz, base: str) -> bool:
    """Whether a store into `base` surely changes no item's values: it is
    a list or dict built here (a slot replaced), and every item known is
    surely one of its objects.  An uncertain one (what a loop's body may
    have stored there: `feat[-1] = state[::-1]`, then `w = feat[-1]; w +=
    W` in the next pass) is re-read, or refused where it is read again."""
    return base in nz.containers and all(
        part.certain for _, part in aliasing.views_of(nz, nz.aliases.get(base, {base})))


def _row_of(nz, base: str, index, value: str) -> bool:
    """Whether `base[index] = value` copies a row or item of `base` into another
    (`res[-2] = res[1]`): two literal indices name one row or disjoint ones."""
    parts = nz.parts.get(value)
    return _literal(index) and bool(parts) and not nz.aliases.get(value, {value}) - {value} \
        and not nz.maybe_aliases.get(value) and all(
            p.base == base and p.kind == "index" and p.certain and _literal(p.index)
            for p in parts)


def _literal(index) -> bool:
    return isinstance(index, gast.Constant) and type(index.value) in (int, str)


def mutation(nz, call: gast.Call) -> bool:
    """Lower a statement-level call that updates an array in place;
    False if `call` is no such call."""
    func = call.func
    method = func.attr if isinstance(func, gast.Attribute) else None
    receiver = func.value.id if method and isinstance(func.value, gast.Name) \
        and func.value.id in nz.locals else None
    if method in ("sort", "fill") and _is_view(func.value):
        receiver = aliasing.view_base(nz, func.value).id   # `y[::-1].sort()`, `y.T.fill(v)`
    callee = nz.src.resolve(func, nz.locals)
    if pop(nz, call) is not None or receiver and _method_mutation(nz, call, receiver, method) \
            or _function_mutation(nz, call, callee):
        return True
    target = mutators.opaque_target(nz, call, callee)   # (or a form not lowered above)
    if target is not None:
        _opaque_mutation(nz, target, call)
    return target is not None


def _method_mutation(nz, call: gast.Call, receiver: str, method: str) -> bool:
    """Lower `receiver.append(v)`, `.fill(v)` or `.sort(...)`, if it is one."""
    if method == "append" and len(call.args) == 1 and not call.keywords:
        _append(nz, receiver, call.args[0])
    elif method == "fill" and len(call.args) == 1 and not call.keywords:
        setitem(nz, receiver, astutil.const(...), nz.atom(call.args[0]))
    elif method == "sort" and not call.args and \
            all(k.arg in ("axis", "key", "reverse") for k in call.keywords):
        _sort_in_place(nz, receiver, call.keywords)
    else:
        return False
    return True


def _function_mutation(nz, call: gast.Call, callee) -> bool:
    """Lower `np.copyto`, `np.put_along_axis`, `np.fill_diagonal` or a
    scatter (`np.add.at(x, i, v)`) into a local, if `call` is one."""
    first = call.args[0].id if call.args and isinstance(call.args[0], gast.Name) \
        and call.args[0].id in nz.locals else None
    if callee is numpy.copyto and len(call.args) == 2 and writable(nz, call.args[0]) \
            and all(k.arg in ("where", "casting") for k in call.keywords):
        _copy_into(nz, call)
    elif callee is numpy.put_along_axis and writable(nz, call.args[0] if call.args else None) \
            and _along_axis(call) is not None:
        arr, indices, values, axis = _along_axis(call)
        index = nz.atom(astutil.call(f"{RUNTIME}.along_axis_index",
                                     [nz.atom(arr), nz.atom(indices), nz.atom(axis)]))
        write_into(nz, arr, nz.atom(values), index)
    elif callee is numpy.fill_diagonal and len(call.args) == 2 and not call.keywords \
            and writable(nz, call.args[0]):
        value = nz.atom(call.args[1])
        dst = call.args[0] if first else aliasing.view_base(nz, call.args[0])
        index = nz.atom(astutil.call(f"{RUNTIME}.diagonal_index", [astutil.name(dst.id)]))
        write_into(nz, dst, value, index)
    elif first and _scatter(callee) and len(call.args) == 3 and not call.keywords:
        _scatter_update(nz, first, _scatter(callee), call.args[1], call.args[2])
    else:
        return False
    return True


def refuse_nonlocal_update(nz, call: gast.Call) -> None:
    """A call whose value is dropped, given a local's value, that may
    update state outside the function: `LOG.append(v)` of a global list,
    a helper of the user's writing into a global array.  s2s_ad does not
    follow that state, so a read of it afterwards would miss the update:
    refused, located."""
    args = [*call.args, *(k.value for k in call.keywords)]
    if not any(n.id in nz.locals for n in traversal.names(args)):
        return
    func = call.func
    callee = nz.src.resolve(func, nz.locals)
    if isinstance(callee, types.FunctionType):
        written = sorted(effects.mutated_nonlocals(callee))
    elif isinstance(func, gast.Attribute) and func.attr in MUTATING_METHODS and \
            not isinstance(getattr(callee, "__self__", None), types.ModuleType) and \
            not isinstance(callee, numpy.ufunc):       # (`np.add` is no `set.add`)
        root = mutators.root_name(func.value)
        written = [root] if root is not None and root not in nz.locals else []
    else:
        written = []
    if written:
        nz.unsupported(call, f"a call that updates `{written[0]}` in place, which is not a "
                             "local variable of the function (global or closure state "
                             "s2s_ad does not follow); return the new value instead")


def writable(nz, dst) -> bool:
    """`dst` is a local or a view of one (`m[2:]`, `m.T`, `m[i].T`)."""
    return isinstance(dst, gast.Name) and dst.id in nz.locals or \
        dst is not None and _is_view(dst) and mutators.root_name(dst) in nz.locals


def write_into(nz, dst, value, index=None) -> None:
    """`dst[index] = value` (all of `dst` if `index` is None) in place, for
    `dst` a local or a view of one: what `np.copyto(dst, v)` and `out=dst`
    do.  A subscript `dst` is read first, as NumPy does, and written whole:
    `out=xs[k]` writes the array a list holds (no slot is replaced), and
    `np.copyto(m[[0, 1]], v)` the copy fancy indexing makes (not `m`)."""
    if index is None and isinstance(dst, gast.Subscript):
        item = nz.atom(dst)
        setitem(nz, item.id, astutil.const(...), value)
        return
    base = dst.id if isinstance(dst, gast.Name) else aliasing.view_base(nz, dst).id
    setitem(nz, base, astutil.const(...) if index is None else index, value)


def _copy_into(nz, call: gast.Call) -> None:
    """`np.copyto(dst, src, where=mask)`: `dst[...] = np.where(mask, src, dst)`,
    `src` evaluated first, as Python does (a call in it may update `dst`)."""
    dst, src = call.args
    where = next((k.value for k in call.keywords if k.arg == "where"), None)
    value = nz.atom(src)
    if where is not None:
        value = nz.atom(astutil.call(f"{NUMPY}.where", [where, value, astutil.clone(dst)]))
    write_into(nz, dst, value)


def _along_axis(call: gast.Call):
    """(arr, indices, values, axis) of `np.put_along_axis(...)`, or None
    where the axis is None (flat indices) or not given plainly."""
    args = list(call.args) + [k.value for k in call.keywords if k.arg == "axis"]
    if len(args) != 4 or len(call.keywords) != len(args) - len(call.args) or \
            any(isinstance(a, gast.Starred) for a in args) or \
            isinstance(args[3], gast.Constant) and args[3].value is None:
        return None
    return args


def restore(nz, target: str, call: gast.Call) -> bool:
    """In forward mode, `x = rt.restore(x, saved, ...)` read from a derived
    function differentiated again (its reverse sweep puts recorded values
    back in place): an in-place update of `x`, whose relations stay,
    followed by `y = rt.follow(y, x)` for each name `y` whose value it may
    change (an identity whose tangent takes the restored elements'
    tangents, matched at run time: no relation needs to be certain).
    False if `call` is no such call; one restoring another name is
    refused.  (Reverse mode refuses an active restore: it has no adjoint.)"""
    if not nz.forward or nz.src.resolve(call.func, nz.locals) is not runtime.restore:
        return False
    first = call.args[0] if call.args else None
    if not (isinstance(first, gast.Name) and first.id == target) or call.keywords:
        nz.unsupported(call, "a call of s2s_ad's runtime `restore` bound to another "
                             "name than the one it restores")
    others = sorted(n for n in _reach(nz, target) - {target} if aliasing.is_local(nz, n))
    nz.emit(astutil.assign(target, astutil.call(
        f"{RUNTIME}.restore",
        [astutil.name(target)] + [calls.argument(nz, a) for a in call.args[1:]])))
    # (a number restored is another object: its aliases are rebound to it,
    # or it to them, only where they still are one, `realias`; fuzz seed
    # 502875, a wrong hvp: `x = _t4` after a later write put back the
    # value the restore had replaced)
    nz.loose.add(target)
    for name in others:
        nz.emit(astutil.assign(name, astutil.call(
            f"{RUNTIME}.follow", [astutil.name(name), astutil.name(target)])))
    nz.unbound.update(set(others) - nz.params)      # (related on some path only)
    return True


def _reach(nz, name: str) -> set:
    """The names whose value an in-place change of `name` may change: its
    (maybe-)aliases and what holds it, transitively (the bases it is a part
    of, the lists joined from them), then every view of those, transitively
    (overlapping views of one base); not the items of a list, which an
    update of the list leaves as they are."""
    up, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n not in up:
            up.add(n)
            todo.extend(nz.aliases.get(n, ()))
            todo.extend(aliasing.maybe_one(nz, {n}))
            todo.extend(p.base for p in nz.parts.get(n))
            todo.extend(sequences.joined_from(nz, n))
    out, todo = set(), sorted(up)
    while todo:
        n = todo.pop()
        if n not in out:
            out.add(n)
            todo.extend(nz.aliases.get(n, ()))
            todo.extend(view for view, part in aliasing.views_of(nz, {n}) if not part.item)
    return out


def _opaque_mutation(nz, target: str, call: gast.Call) -> None:
    """A call that updates `target` in place and has no functional form:
    `target = mutated(target, call)`, a located error if a gradient must
    flow through it."""
    stmt = astutil.assign(target, astutil.call(
        f"{RUNTIME}.mutated", [astutil.name(target), astutil.clone(call)]))
    nz.emit(stmt)
    writebacks.after_update(nz, stmt, target, always=True)


def _scatter_update(nz, base: str, update, index, values) -> None:
    """`np.add.at(base, index, values)` & co., unbuffered and in place:
    `base = scatter_add(base, index, values)`."""
    stmt = astutil.assign(base, astutil.call(
        f"{RUNTIME}.{update.__name__}",
        [astutil.name(base), calls.argument(nz, index), nz.atom(values)]))
    nz.emit(stmt)
    writebacks.after_update(nz, stmt, base, always=True)


def pop(nz, call: gast.Call):
    """`items.pop(i)` on a local list or dict: `v = items[i]` (the value),
    then `items = pop(items, i)` in place; None if `call` is no such call."""
    func = call.func
    if not (isinstance(func, gast.Attribute) and func.attr == "pop" and
            isinstance(func.value, gast.Name) and func.value.id in nz.locals
            and len(call.args) <= 1 and not call.keywords):
        return None
    items = func.value.id
    index = nz.atom(call.args[0]) if call.args else astutil.const(-1)
    value = nz.namer.temp("pop")
    nz.emit(astutil.assign(value, astutil.subscript(
        astutil.name(items), astutil.clone(index))))
    # the value leaves its slot, the one relation it had to the names that
    # hold it too (`a` of `xs = [a]`): they stay maybe one object
    for held, part in aliasing.views_of(nz, {items}):
        if part.item and held != value:
            aliasing.maybe_same(nz, value, held)
    stmt = astutil.assign(items, astutil.call(
        f"{RUNTIME}.pop", [astutil.name(items), astutil.clone(index)]))
    nz.emit(stmt)
    for _, part in aliasing.views_of(nz, {items}):
        part.certain = False        # its items moved: which index is which?
    sequences.slot_replaced(nz, items, None)
    writebacks.after_update(nz, stmt, items, always=True, moves_items=True)
    return astutil.name(value)


def _sort_in_place(nz, name: str, keywords) -> None:
    """`y.sort(...)` of an array or a list: `y[:] = sort_like(y, ...)`."""
    kws = [(k.arg, nz.atom(k.value)) for k in keywords]
    value = nz.atom(astutil.call(f"{RUNTIME}.sort_like", [astutil.name(name)], kws))
    setitem(nz, name, astutil.call(astutil.builtin("slice"), [astutil.const(None)]),
                  value)


def _append(nz, items: str, value) -> None:
    """`items.append(v)` in place, recording where the item lands:
    `k = len(items); items = append(items, v, k)`."""
    item = nz.atom(value)
    position = nz.namer.temp("at")
    nz.emit(astutil.assign(position, astutil.call(astutil.builtin("len"), [astutil.name(items)])))
    stmt = astutil.assign(items, astutil.call(
        f"{RUNTIME}.append", [astutil.name(items), item, astutil.name(position)]))
    nz.emit(stmt)
    writebacks.after_update(nz, stmt, items, always=True, moves_items=True)
    if isinstance(item, gast.Name) and item.id != items and aliasing.is_local(nz, item.id):
        # the item is a part of the list, as an item of a display is
        nz.parts.add(item.id, Part(items, "index", astutil.subscript(
            astutil.name(items), astutil.name(position)), item=True))


def s_AugAssign(nz, stmt: gast.AugAssign) -> None:
    """`a += b` updates arrays in place, as in NumPy: `a = iadd(a, b)`;
    `x[i] += v` reads, adds and stores back into `x`."""
    target = stmt.target
    if isinstance(target, gast.Subscript):
        # as Python does: the item is augmented (in place if it is an
        # array) and stored back
        base, index = subscript_target(nz, target)
        item = nz.namer.temp()
        nz.temps.append(item)           # (the statement's: read no more after it)
        nz.augmented.add(item)
        nz.emit(astutil.assign(item, astutil.subscript(
            astutil.name(base), astutil.index_syntax(index))))
        for other in sorted(nz.joined.get(base, ())):    # `+`/`*` shared its items
            refusals.shared(nz, item, Part(other, "reshape", astutil.name(other)),
                            "is updated in place, an item another list holds too,")
        _augment(nz, item, stmt.op, nz.atom(stmt.value))
        setitem(nz, base, index, astutil.name(item), replaces=False, last=True)
        return
    if not isinstance(target, gast.Name):
        nz.unsupported(stmt, "augmented assignment to " + astutil.describe(target))
    _augment(nz, target.id, stmt.op, nz.atom(stmt.value))


def _own_operand(nz, name: str, value):
    """`value`, copied first (`rt.keep`, whose adjoint is the identity)
    if it may share memory with `name`, which the update overwrites:
    NumPy reads such an operand before writing, and so must the adjoint."""
    if isinstance(value, gast.Name) and value.id in aliasing.related(nz, name):
        return nz.atom(astutil.call(f"{RUNTIME}.keep", [value]))
    return value


def _augment(nz, name: str, op, value) -> None:
    """`name op= value`: `name = iadd(name, value)`, in place for arrays
    (an operand sharing its memory copied first: `z = v; v *= z`)."""
    value = _own_operand(nz, name, value)
    func = _INPLACE.get(type(op))
    rhs = astutil.call(f"{OPERATORS}.{func}", [astutil.name(name), value]) \
        if func else astutil.binop(astutil.name(name), op, value)
    update = astutil.assign(name, rhs)
    nz.emit(update)
    writebacks.after_update(nz, update, name, always=False)


def _is_view(expr) -> bool:
    """`x[...]` or `x.T`: an expression that may be a view of a local."""
    return isinstance(expr, gast.Subscript) or \
        isinstance(expr, gast.Attribute) and expr.attr == "T"


def _scatter(callee):
    """The runtime primitive for `np.add.at` & co., or None."""
    return runtime.SCATTERS.get(callee.__self__) if mutators.is_ufunc_at(callee) else None
