"""Loops in A-normal form: `for` over ranges and sequences, `while`.

Functions over the normalizer's state `nz` (__init__.py has the grammar).  A `for` loop
becomes an index loop over a range so that the reverse sweep can run it
backward and element reads are ordinary subscripts; `enumerate`, `zip` and
`reversed` compose over indexable sequences (`reversed(range(a, b))` is a
range itself, counting down).  A `while` loop computes its
test into one variable before the loop and again at the end of the body.
"""
from __future__ import annotations

import gast

from .. import astutil, effects, frontend, scopes, traversal
from ..ir import RUNTIME
from . import aliasing, assign, compound

# methods that may change the length of the list or dict they are called on
_RESIZERS = {"append", "extend", "insert", "pop", "remove", "clear", "popitem",
             "update", "setdefault"}


def s_For(nz, stmt: gast.For) -> None:
    """`for x in X:` becomes an index loop over a range, so that the reverse
    sweep can run it backward and element reads are ordinary subscripts.
    The range is evaluated once into a variable if the body rebinds a name
    it reads (the reverse sweep evaluates the header again)."""
    before = compound.enter_compound(nz, stmt)
    if _unroll(nz, stmt):
        return
    updated, nz.loop_updates = nz.loop_updates, effects.updated_roots(stmt.body)
    header, element, counted = _iteration(nz, stmt.iter)
    nz.loop_updates = updated
    guard = _resize_guard(nz, stmt, counted)
    if scopes.stored_names(stmt) & set(scopes.load_names(header.iter)):
        t = nz.namer.temp("range")
        nz.emit(astutil.assign(t, header.iter))
        header.iter = astutil.name(t)
    index = header.target.id
    body = nz.capture(lambda: assign.assign_target(nz, stmt.target, element(index))) \
        if element else []
    if element is None:
        _check_loop_target(nz, stmt.target)
        user = stmt.target.id
        if user in nz.params or nz.store_counts[user] > 1:
            # a name bound elsewhere too: counting with a fresh index makes
            # `user = index` an ordinary assignment (recorded, killing)
            index = nz.namer.fresh(user)
            header.target = astutil.name(index, store=True)
            body = nz.capture(lambda: nz.emit(astutil.assign(user, astutil.name(index))))
        else:
            header.target = astutil.name(user, store=True)
    nz.loops.append(astutil.module([stmt, *body]))   # (reads each time)
    header.body = body + nz.block(stmt.body) + guard
    nz.loops.pop()
    header.orelse = nz.block(stmt.orelse)
    nz.emit(header)
    compound.leave_compound(nz, stmt, before, header)


def _unroll(nz, stmt) -> bool:
    """`for fn in [np.sin, np.cos]:` runs its body once per function, with
    the function in place of `fn`, so that each call resolves."""
    items = stmt.iter.elts if isinstance(stmt.iter, (gast.List, gast.Tuple)) else \
        nz.displays.get(getattr(stmt.iter, "id", None), [])
    if not items or not isinstance(stmt.target, gast.Name) or stmt.orelse:
        return False
    if not all(callable(nz.src.resolve(e, nz.locals)) for e in items):
        return False
    name = stmt.target.id
    jumps = (gast.Break, gast.Continue)
    if name in scopes.stored_names(stmt) - {name} or any(
            isinstance(n, jumps) for s in stmt.body for n in traversal.walk(s)):
        return False
    for item in items:
        body = [_substitute(astutil.clone(s), name, item) for s in stmt.body]
        for copy, user in zip(scopes.statements(body), scopes.statements(stmt.body)):
            if user in nz.stand_in:       # from a comprehension: its statement
                nz.stand_in[copy] = nz.stand_in[user]
        nz.out.extend(nz.block(body))
    return True


def _iteration(nz, iterable):
    """(a `for` header over a range, a function making the element read or
    None when the loop target is the range's own counter, and for a loop
    over a sequence (its length expression, the name recording it)).
    The length is recorded before the loop: the reverse sweep counts the
    same iterations even if the sequence grows or shrinks later."""
    callee = _callee(nz, iterable)
    if callee is range:
        rng = astutil.call(astutil.builtin("range"), [nz.atom(a) for a in iterable.args])
        return astutil.for_("_", rng, []), None, None
    backward = callee is reversed and len(iterable.args) == 1
    inner = iterable.args[0] if backward else None
    if backward and _callee(nz, inner) is range and 1 <= len(inner.args) <= 2:
        return _reversed_range(nz, inner.args), None, None
    index = nz.namer.fresh("k")
    length, element = _view(nz, iterable.args[0] if backward else iterable)
    count = nz.namer.temp("n")
    nz.emit(astutil.assign(count, length))
    if backward:
        last = nz.atom(astutil.binop(astutil.name(count), gast.Sub, astutil.const(1)))
        bounds = [last, astutil.const(-1), astutil.const(-1)]
    else:
        bounds = [astutil.name(count)]
    rng = astutil.call(astutil.builtin("range"), bounds)
    return astutil.for_(index, rng, []), element, (length, count)


def _reversed_range(nz, args: list) -> gast.For:
    """`for _ in reversed(range(a, b))` as the range it is, `range(b - 1, a - 1, -1)`
    (no sequence to index, nor one that could change length)."""
    start = nz.atom(args[0]) if len(args) == 2 else astutil.const(0)
    stop = nz.atom(args[-1])
    bounds = [nz.atom(astutil.binop(astutil.clone(b), gast.Sub, astutil.const(1)))
              for b in (stop, start)] + [astutil.const(-1)]
    return astutil.for_("_", astutil.call(astutil.builtin("range"), bounds), [])


def _resize_guard(nz, stmt, counted) -> list:
    """`rt.same_length(len(seq), n, where)` at the end of the body of a
    loop over a sequence that the body may make longer or shorter:
    Python's iterator would see the change, the index loop counts the
    items there were when it started (a located error if they differ)."""
    if counted is None or not _may_resize(nz, stmt.body):
        return []
    length, count = counted
    loc = nz.src.locate(stmt)
    where = (loc.filename, loc.line, loc.col, loc.source_line)
    return [astutil.expr_stmt(astutil.call(f"{RUNTIME}.same_length", [
        astutil.clone(length), astutil.name(count), astutil.const(where)]))]


def _may_resize(nz, body) -> bool:
    """Whether `body` may change the length of a list or dict: a method
    that can (on a name of the user's), `del`, an augmented or slice
    assignment, or a call of a function that is not a library's."""
    for node in (n for s in body for n in traversal.walk(s)):
        if isinstance(node, (gast.Delete, gast.AugAssign)):
            return True
        if isinstance(node, gast.Assign) and any(
                isinstance(t, gast.Subscript) and isinstance(t.slice, gast.Slice)
                for t in node.targets):
            return True
        if isinstance(node, gast.Call):
            func = node.func
            if isinstance(func, gast.Attribute) and func.attr in _RESIZERS:
                if getattr(func.value, "id", None) not in nz.namer.temps:
                    return True             # (not a comprehension's own list)
                continue
            callee = nz.src.resolve(node.func, nz.locals)
            if (node.args or node.keywords) and not frontend.from_library(callee):
                return True
    return False


def _callee(nz, expr):
    """What the call `expr` calls, if its arguments are positional (or
    `enumerate`'s `start=`)."""
    if isinstance(expr, gast.Call):
        callee = nz.src.resolve(expr.func, nz.locals)
        if not expr.keywords or callee is enumerate and _start(expr) is not None:
            return callee
    return None


def _start(call: gast.Call):
    """`enumerate(a, s)`'s or `enumerate(a, start=s)`'s `s` (None if none,
    or if anything else is given by keyword)."""
    if len(call.args) > 1:
        return None if call.keywords else call.args[1]
    if len(call.keywords) == 1 and call.keywords[0].arg == "start":
        return call.keywords[0].value
    return None


def _view(nz, iterable):
    """(length, k -> the k-th element) of an iterable, composing
    `enumerate`, `zip` and `reversed` over indexable sequences."""
    callee = _callee(nz, iterable)
    if callee is enumerate:
        length, element = _view(nz, iterable.args[0])
        start = _start(iterable)
        start = nz.atom(start) if start is not None else None
        count = (lambda k: astutil.binop(astutil.name(k), gast.Add, astutil.clone(start))) \
            if start is not None else astutil.name
        return length, lambda k: astutil.tuple_([count(k), element(k)])
    if callee is zip and iterable.args:
        views = [_view(nz, a) for a in iterable.args]
        lengths = [v[0] for v in views]
        length = lengths[0] if len(lengths) == 1 else astutil.call(astutil.builtin("min"), lengths)
        return length, lambda k: astutil.tuple_([v[1](k) for v in views])
    if callee is reversed and len(iterable.args) == 1:
        length, element = _view(nz, iterable.args[0])
        last = nz.atom(astutil.binop(length, gast.Sub, astutil.const(1)))
        return length, lambda k: element(_reversed_index(nz, last, k))
    if dict_view(iterable):
        return _dict_items(nz, iterable)
    seq = nz.atom(iterable)
    if isinstance(iterable, gast.Call) and callee is not range:
        seq = _materialize(nz, seq)
    elif isinstance(seq, gast.Name) and seq.id not in nz.displays:
        seq = _indexable(nz, seq)      # a dict iterates its keys
    return astutil.call(astutil.builtin("len"), [astutil.clone(seq)]), lambda k: _subscript(seq, k)


def dict_view(iterable) -> bool:
    """`d.items()`, `d.values()` or `d.keys()`."""
    return (isinstance(iterable, gast.Call) and not iterable.args
            and not iterable.keywords and isinstance(iterable.func, gast.Attribute)
            and iterable.func.attr in ("items", "values", "keys"))


def _dict_items(nz, iterable):
    """`d.items()`, `.values()`, `.keys()`: over a snapshot of the keys,
    reading `d[key]` (whose adjoint is the dict's)."""
    mapping = nz.atom(iterable.func.value)
    keys = nz.atom(astutil.call(f"{RUNTIME}.keys", [mapping]))
    kind = iterable.func.attr

    def element(k):
        key = _subscript(keys, k)
        value = astutil.subscript(astutil.clone(mapping), _subscript(keys, k))
        return {"keys": key, "values": value}.get(kind) or astutil.tuple_([key, value])
    return astutil.call(astutil.builtin("len"), [astutil.clone(keys)]), element


def _indexable(nz, seq):
    t = nz.namer.temp("seq")
    nz.emit(astutil.assign(t, astutil.call(f"{RUNTIME}.indexable", [seq])))
    return astutil.name(t)


def _reversed_index(nz, last, k: str) -> str:
    t = nz.namer.temp()
    nz.emit(astutil.assign(t, astutil.binop(astutil.clone(last), gast.Sub,
                                              astutil.name(k))))
    return t


def _materialize(nz, seq):
    """The items of a call's result, listed when the loop starts.  Python
    reads an array's items as it goes: if the body updates in place what
    the result may share memory with, the list would hold stale items, so
    that is refused."""
    stale = sorted(aliasing.related(nz, seq.id) & nz.loop_updates) \
        if isinstance(seq, gast.Name) else []
    if stale:
        nz.unsupported(nz.user_stmt, f"a loop over a value that may share memory with "
                                     f"`{stale[0]}`, which its body updates in place "
                                     "(Python reads the items as it goes; iterate a copy, "
                                     "or the array itself)")
    t = nz.namer.temp("seq")
    nz.emit(astutil.assign(t, astutil.call(astutil.builtin("list"), [seq])))
    return astutil.name(t)


def _check_loop_target(nz, target) -> None:
    if not isinstance(target, gast.Name):
        nz.unsupported(target, "a loop target that is not a plain name "
                          "when looping over range(...)")


def s_While(nz, stmt: gast.While) -> None:
    """`while test:` computes the test into one variable before the loop and
    again at the end of the body (a `continue` is lowered to a flag later,
    so the recomputation is always reached)."""
    before = compound.enter_compound(nz, stmt)
    cond = nz.namer.fresh("cond")

    def recompute():
        nz.emit(astutil.assign(cond, nz.rhs(stmt.test)))
    recompute()
    nz.loops.append(stmt)
    loop = astutil.while_(astutil.name(cond), nz.block(stmt.body),
                          nz.block(stmt.orelse))
    nz.while_tests[loop] = nz.capture(recompute)
    nz.loops.pop()
    nz.emit(loop)
    compound.leave_compound(nz, stmt, before, loop)


def s_Break(nz, stmt) -> None:
    nz.emit(astutil.break_())


def s_Continue(nz, stmt) -> None:
    nz.emit(astutil.continue_())


def _subscript(seq, index: str):
    return astutil.subscript(astutil.clone(seq), astutil.name(index))


def _substitute(stmt, name: str, value):
    """`stmt` with every read of `name` replaced by `value`."""
    for node in traversal.walk(stmt):
        for field, child in gast.iter_fields(node):
            if isinstance(child, gast.Name) and child.id == name and isinstance(child.ctx, gast.Load):
                setattr(node, field, astutil.clone(value))
            elif isinstance(child, list):
                for i, item in enumerate(child):
                    if isinstance(item, gast.Name) and item.id == name and \
                            isinstance(item.ctx, gast.Load):
                        child[i] = astutil.clone(value)
    return stmt
