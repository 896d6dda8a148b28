"""Comprehensions and generator expressions, lowered to loops.

Functions over the normalizer's state `nz` (__init__.py has the grammar).  A list or dict
comprehension becomes, where it stands, an accumulator bound to an
empty display and the nested `for`/`if` statements that fill it:

    [e for x in xs if c]      _listcomp1 = []
                              for x_1 in xs:
                                  if c:
                                      _listcomp1.append(e)

which the loop, branch and in-place forms then normalize like the user's
own statements.  The variables a comprehension binds are its own in Python
3, so each is renamed to a fresh local (`x_1`) wherever the comprehension's
scope sees it: the enclosing function's `x`, if any, is untouched.  The
statements keep the location of the comprehension, and stand in for the
user's statement that holds it (`stand_in`), so `# grad of:` shows that
statement.  A set comprehension is `set([...])`.

A generator expression is lowered as a list when a call consumes it whole
at once (`sum`, `max`, `min`, `list`, ...), which gives the same values;
so is `zip(...)` or `enumerate(...)` given to such a call (`dict(zip(k, v))`),
and `map(f, a)` or `filter(f, a)` (`sum(map(np.sin, xs))`);
anywhere else (kept, passed to `next`, iterated twice) lowering would
change what the program does, so it is refused with a located error.

`functools.reduce(f, items[, initial])` is the loop it runs, over the
items listed first: `acc = items[0]` (or `initial`), then `acc = f(acc,
item)` for each other item.
"""
from __future__ import annotations

import builtins
import functools
import math

import gast
import numpy

from .. import astutil, scopes
from ..ir import RUNTIME, member
from . import iteration

# Calls that iterate a generator argument to its end before returning, and
# so see the same items in a list.
_CONSUMERS = {builtins.sum, builtins.max, builtins.min, builtins.list, builtins.tuple,
              builtins.sorted, builtins.set, builtins.frozenset, builtins.dict,
              builtins.any, builtins.all, math.fsum, math.prod}
# NumPy calls that do not iterate a generator (`np.array(g)` is a 0-d object
# array holding it; `np.stack(g)` raises or warns): the user means a list.
_NOT_ITERATED = {numpy.array, numpy.asarray, numpy.stack, numpy.vstack, numpy.hstack,
                 numpy.concatenate, numpy.column_stack, numpy.dstack, numpy.sum,
                 numpy.prod, numpy.mean, numpy.max, numpy.min}
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def e_ListComp(nz, expr):
    return _comprehension(nz, expr, astutil.list_([]), "listcomp")


def e_SetComp(nz, expr):
    """`set([...])`: a set holds no gradient, so one of values that carry
    a gradient is refused there (no rule for `set`)."""
    items = gast.copy_location(astutil.list_comp(expr.elt, expr.generators), expr)
    return nz.rhs(gast.copy_location(astutil.call(astutil.builtin("set"), [items]), expr))


def e_DictComp(nz, expr):
    return _comprehension(nz, expr, astutil.dict_([], []), "dictcomp")


def e_GeneratorExp(nz, expr):
    nz.unsupported(expr, "a generator expression that is not consumed whole "
                      "where it is written (s2s_ad lowers a generator to a loop only "
                      "as the argument of `sum`, `max`, `min`, `list`, `tuple`, "
                      "`sorted`, `any`, `all` and the like); write a list "
                      "comprehension `[...]` instead")


def consumed_generators(nz, call: gast.Call, callee) -> list:
    """`call`'s positional arguments, a generator expression `callee`
    consumes whole replaced by the list comprehension it equals; a
    located error for a NumPy function given a generator."""
    out = []
    for arg in call.args:
        if isinstance(arg, gast.GeneratorExp):
            if member(callee, _NOT_ITERATED):
                name = astutil.dotted_name(call.func) or "this function"
                nz.unsupported(arg, f"a generator expression passed to `{name}`, "
                                  "which does not iterate it as it would a list; "
                                  "write a list comprehension `[...]` instead")
            if member(callee, _CONSUMERS) or _is_join(call):
                arg = _as_list(arg)
        elif member(callee, _CONSUMERS) and _pairing(nz, arg):
            arg = _spelled_out(nz, arg)
        elif member(callee, _CONSUMERS) and _mapping(nz, arg):
            arg = _mapped(nz, arg)
        elif member(callee, _CONSUMERS) and iteration.dict_view(arg):
            arg = _listed(nz, arg)
        out.append(arg)
    return out


def _pairing(nz, arg) -> bool:
    """`zip(a, b)` or `enumerate(a)`, with positional arguments (or
    `enumerate`'s `start=`)."""
    if not isinstance(arg, gast.Call) or any(isinstance(a, gast.Starred) for a in arg.args):
        return False
    callee = nz.src.resolve(arg.func, nz.locals)
    if callee is builtins.enumerate:
        return all(k.arg == "start" for k in arg.keywords) and len(arg.keywords) <= 1
    return callee is builtins.zip and not arg.keywords


def _spelled_out(nz, call: gast.Call) -> gast.ListComp:
    """`dict(zip(keys, values))`: `zip(...)` or `enumerate(...)` given to
    a consumer is the list comprehension of the tuples it yields, which
    a comprehension's loop knows how to iterate and differentiate."""
    width = 2 if nz.src.resolve(call.func, nz.locals) is builtins.enumerate \
        else len(call.args)
    items = [nz.namer.temp("item") for _ in range(width)]
    loop = astutil.comprehension(
        astutil.tuple_([astutil.name(i, store=True) for i in items], store=True), call)
    return gast.copy_location(
        astutil.list_comp(astutil.tuple_([astutil.name(i) for i in items]), [loop]), call)


def _mapping(nz, arg) -> bool:
    """`map(f, a, ...)` or `filter(f, a)`, with positional arguments, `f`
    a name (`np.sin`, `helper`), a lambda, or for `filter` None: nothing
    whose evaluation the list comprehension `_mapped` could move."""
    if not isinstance(arg, gast.Call) or arg.keywords or not arg.args or \
            any(isinstance(a, gast.Starred) for a in arg.args):
        return False
    callee, func = nz.src.resolve(arg.func, nz.locals), arg.args[0]
    plain = isinstance(func, gast.Lambda) or astutil.dotted_name(func) is not None
    if callee is builtins.map:
        return plain and len(arg.args) >= 2
    return callee is builtins.filter and len(arg.args) == 2 and \
        (plain or astutil.is_none(func))


def _mapped(nz, call: gast.Call) -> gast.ListComp:
    """`map(f, a, b)` given to a consumer is the list comprehension
    `[f(_item1, _item2) for _item1, _item2 in zip(a, b)]`, and `filter(f,
    a)` is `[_item1 for _item1 in a if f(_item1)]` (`filter(None, a)`:
    `if _item1`): what a comprehension's loop iterates and differentiates."""
    func, *seqs = call.args
    items = [nz.namer.temp("item") for _ in seqs]
    if len(seqs) == 1:
        target, source = astutil.name(items[0], store=True), seqs[0]
    else:
        target = astutil.tuple_([astutil.name(i, store=True) for i in items], store=True)
        source = astutil.call(astutil.builtin("zip"), seqs)
    if nz.src.resolve(call.func, nz.locals) is builtins.filter:
        test = astutil.name(items[0]) if astutil.is_none(func) else \
            astutil.call(func, [astutil.name(items[0])])
        loop, elt = astutil.comprehension(target, source, [test]), astutil.name(items[0])
    else:
        loop = astutil.comprehension(target, source)
        elt = astutil.call(func, [astutil.name(i) for i in items])
    return gast.copy_location(astutil.list_comp(elt, [loop]), call)


def _listed(nz, view: gast.Call) -> gast.ListComp:
    """`sum(d.values())`, `sorted(d.items())`: a dict's view given to a
    consumer is the list comprehension of what it yields (a loop over a
    dict's view reads each value as `d[key]`, which is differentiated)."""
    item = nz.namer.temp("item")
    loop = astutil.comprehension(astutil.name(item, store=True), view)
    return gast.copy_location(astutil.list_comp(astutil.name(item), [loop]), view)


def _comprehension(nz, expr, empty, stem: str):
    if any(g.is_async for g in expr.generators):
        nz.unsupported(expr, "an async comprehension")
    acc = nz.namer.temp(stem)
    nz.locals.add(acc)
    nz.emit(astutil.assign(acc, empty))
    _normalize_loop(nz, _comprehension_loop(nz, expr, acc))
    return astutil.name(acc)


def _normalize_loop(nz, loop: gast.For) -> None:
    """Normalize the `for` loop a call or comprehension stands for, each
    statement in it standing in for the user's statement that holds it
    (`# grad of:` shows that one)."""
    user, nz.user_stmt = nz.user_stmt, loop
    for stmt in scopes.statements([loop]):
        nz.stand_in[stmt] = nz.stand_in.get(user, user)
    iteration.s_For(nz, loop)
    nz.user_stmt = user


def _comprehension_loop(nz, expr, acc: str) -> gast.For:
    """The nested `for`/`if` statements that fill `acc`, with the
    comprehension's variables renamed to fresh locals."""
    renames, loops = {}, []
    for i, gen in enumerate(expr.generators):
        iter_ = _renamed(gen.iter, renames) if i else astutil.clone(gen.iter)
        for name in sorted(scopes.bound_names(gen.target)):
            renames[name] = nz.namer.fresh(name)
            nz.renamed[renames[name]] = name
            nz.locals.add(renames[name])
            nz.loop_stored.add(renames[name])
        target = _renamed(gen.target, renames)
        loops.append((target, iter_, [_renamed(c, renames) for c in gen.ifs]))
    if isinstance(expr, gast.DictComp):
        key, value = _renamed(expr.key, renames), _renamed(expr.value, renames)
        body = [astutil.assign(astutil.subscript(astutil.name(acc), key, store=True), value)]
    else:
        body = [astutil.expr_stmt(astutil.call(
            astutil.attribute(astutil.name(acc), "append"), [_renamed(expr.elt, renames)]))]
    for stmt in body:
        gast.copy_location(stmt, expr)
    for target, iter_, ifs in reversed(loops):
        for test in reversed(ifs):
            body = [gast.copy_location(astutil.if_(test, body), test)]
        body = [gast.copy_location(astutil.for_(target, iter_, body), expr)]
    return body[0]


def _as_list(gen: gast.GeneratorExp) -> gast.ListComp:
    return gast.copy_location(astutil.list_comp(gen.elt, gen.generators), gen)


def _is_join(call: gast.Call) -> bool:
    """`sep.join(g)`: a string's join consumes its argument."""
    return isinstance(call.func, gast.Attribute) and call.func.attr == "join" and \
        isinstance(call.func.value, gast.Constant) and isinstance(call.func.value.value, str)


def _renamed(node, renames: dict):
    """A copy of `node` with the names in `renames` renamed where they
    refer to the comprehension's variables: not inside a nested scope (a
    lambda, another comprehension) that binds the same name."""
    node = astutil.clone(node)
    _rename_in(node, renames)
    return node


def _rename_in(node, renames: dict) -> None:
    if not renames:
        return
    if isinstance(node, gast.Name):
        node.id = renames.get(node.id, node.id)
    elif isinstance(node, gast.Lambda):
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
            _rename_in(default, renames)
        bound = {a.id for a in scopes.params(node.args)}
        _rename_in(node.body, {k: v for k, v in renames.items() if k not in bound})
    elif isinstance(node, _COMPREHENSIONS):
        inner = dict(renames)
        for i, gen in enumerate(node.generators):
            _rename_in(gen.iter, renames if i == 0 else inner)
            for name in scopes.bound_names(gen.target):
                inner.pop(name, None)
            for test in gen.ifs:
                _rename_in(test, inner)
        for part in ("elt", "key", "value"):
            if hasattr(node, part):
                _rename_in(getattr(node, part), inner)
    else:
        for field in node._fields:
            child = getattr(node, field, None)
            for item in child if isinstance(child, list) else [child]:
                if isinstance(item, gast.AST):
                    _rename_in(item, renames)


def is_reduce(nz, call: gast.Call, callee) -> bool:
    """`functools.reduce(f, items)` or `(f, items, initial)`, positionally."""
    return callee is functools.reduce and 2 <= len(call.args) <= 3 and not call.keywords \
        and not any(isinstance(a, gast.Starred) for a in call.args)


def reduced(nz, call: gast.Call) -> gast.Name:
    """`functools.reduce(...)` as the loop it runs (see the module
    docstring); the arguments are evaluated first, in order, as Python
    does (a lambda, a name or a dotted name is called as written)."""
    func, items, *initial = call.args
    if not isinstance(func, (gast.Lambda, gast.Name, gast.Attribute)):
        func = nz.atom(func)
    listed, acc, k = nz.namer.temp("items"), nz.namer.temp("acc"), nz.namer.temp("k")
    nz.locals.update({listed, acc, k})
    nz.emit(astutil.assign(listed, astutil.call(astutil.builtin("list"), [nz.atom(items)])))
    first = nz.atom(initial[0]) if initial else None
    if first is None:       # Python's TypeError for no items and no initial value
        nz.emit(astutil.expr_stmt(astutil.call(f"{RUNTIME}.check_reduce", [astutil.name(listed)])))
        first = astutil.subscript(astutil.name(listed), astutil.const(0))
    nz.emit(astutil.assign(acc, first))
    step = astutil.assign(astutil.name(acc, store=True), astutil.call(astutil.clone(func), [
        astutil.name(acc), astutil.subscript(astutil.name(listed), astutil.name(k))]))
    loop = gast.copy_location(astutil.for_(astutil.name(k, store=True), astutil.call(
        astutil.builtin("range"), [astutil.const(0 if initial else 1), astutil.call(
            astutil.builtin("len"), [astutil.name(listed)])]), [gast.copy_location(step, call)]),
        call)
    _normalize_loop(nz, loop)
    return astutil.name(acc)

