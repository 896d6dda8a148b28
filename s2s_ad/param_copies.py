"""Which parameters the derived function must copy before it runs.

What: `param_copies` maps each parameter that an in-place update in the
function may reach (the update itself, a helper that updates an argument,
a call inside an undifferentiated expression that writes one) to the first
statement that may reach it.  An update reaches a parameter directly,
through plain copies of it (`a = x`), through its items (`xs[0]`, `d['k']`,
what `zip`/`dict`/... hold), through its views (`x.T`, `x[1:]`,
`x.reshape(...)`), and through what a call may return: a helper's result
may be its argument or an item of one, and so may any NumPy function's
or array method's not known to make a new array (fresh.py).

Why: the primal mutates the caller's array when it updates a parameter in
place, but the derived function runs the primal's statements *and* must
leave its arguments as it found them (the user calls `grad(f)(x)` and still
holds `x`; the reverse sweep may read the value the update destroyed).
reverse.py therefore opens the derived function with `p = rt.copy(p)` for
each parameter returned here, so every update lands on the copy.

Invariants:
- sound, not exact: a may-alias analysis on the one walker
  (dataflow.Walk).  A name maps to every parameter it may share memory
  with; a binding replaces that set, the sets of two paths are joined
  where they meet, and a loop is iterated to a fixpoint at its head (a
  walk over the whole function again from the passes' join lost what a
  loop carried to its next iteration whenever a statement before the loop
  rebound the name).  A parameter missed here would be a caller's input
  mutated; one too many is only a copy.
- pure: reads the ANF body, its prims and `Normalized.shares`; changes none.
- deterministic: the result is sorted by parameter name (it orders the
  prologue of the generated code).
- a loop that does not settle is an `InternalError` (the walker's), never
  a silent stop.
"""
from __future__ import annotations

import builtins
import operator

import gast

from . import fresh, runtime
from .dataflow import Walk
from .ir import CALL, COPY, DYNAMIC, UNKNOWN, member, names_of
from .rules import registry


def param_copies(body, prims, params, shares: dict) -> dict:
    """Parameters that an in-place update may reach (directly, through plain
    copies, or through items and views of them), each with the first
    statement that does: the derived function copies them so that the
    caller's arrays are never mutated.  A may-alias analysis on the one
    walker (dataflow.Walk): a name maps to the parameters it may share
    memory with; a binding replaces that set, paths join where they meet,
    and a loop is iterated to a fixpoint at its head, so what a later
    statement of the body binds reaches its earlier ones (`x = x * 1.0`
    before a loop whose body updates `x` and then swaps it with a
    parameter: the second pass updates the parameter).  Without an update
    anywhere (no in-place primitive, no helper updating an argument) no
    parameter is reached, and there is nothing to walk."""
    if not any(prim.inplace or prim.updated_names for prim in prims.values()):
        return {}
    reached: dict = {}

    def transfer(stmt, alias: dict) -> dict:        # (updated in place: see `fork`)
        _alias_step(stmt, alias, prims.get(stmt), shares, reached, params)
        return alias
    Walk(transfer, _join, fork=_copy).run(body, {p: {p} for p in params})
    return dict(sorted(reached.items()))


def _alias_step(stmt, alias: dict, prim, shares: dict, reached: dict, params) -> None:
    def reach(name):
        for param in sorted(alias.get(name, ())):
            reached.setdefault(param, stmt)
    for name in sorted(prim.updated_names if prim is not None else ()):   # a helper's
        reach(name)
    if not isinstance(stmt, gast.Assign):
        return
    target = stmt.targets[0].id
    source = prim.operands[0] if prim.operands else None
    if prim.inplace:
        for name in sorted({target} | shares.get(stmt, set())):     # (items and views too)
            reach(name)
        inserted = names_of(prim.binding.get("item", prim.binding.get("value")))
        if inserted:            # `xs.append(v)`, `d[k] = v`: the container holds v now
            alias.setdefault((_ITEMS, target), set()).update(
                *(alias.get(n, set()) | alias.get((_ITEMS, n), set()) for n in inserted))
        return
    shared, held = _shared_and_held(prim, source, alias, stmt.value)
    for key, found in ((target, shared), ((_ITEMS, target), held)):
        if found:
            alias[key] = set(found)
        elif key not in params:     # (a parameter keeps its own)
            alias.pop(key, None)    # a new object


def _shared_and_held(prim, source, alias: dict, value) -> tuple[set, set]:
    """(the parameters the value `prim` makes may be, those its items may
    be): a copy is its source and holds what it holds; a part (an item, a
    view) may be its source or one of its items; a display holds its
    items (updating the list itself, `lr.append(v)`, changes none of them);
    a list joined or repeated holds its operands' items.  A call of a
    function of the user's, or of a NumPy function or array method not
    known to make a new array (fresh.py), may return any argument, an
    item of one or a view of one (`ident(x)`, `np.squeeze(x)`): unknown
    means shared."""
    items = alias.get((_ITEMS, source), set())
    if prim.kind == COPY:
        return alias.get(source, set()), items
    if prim.key in _PARTS_OF:
        return alias.get(source, set()) | items, items
    every = set().union(*(alias.get(o, set()) | alias.get((_ITEMS, o), set())
                          for o in prim.operands))
    if prim.kind in (CALL, DYNAMIC, UNKNOWN) or _may_return_part(prim.key, value) or \
            prim.key is builtins.max or prim.key is builtins.min or \
            prim.key is runtime.get_other:      # one of its arguments, or an item of one
        return every, every
    if member(prim.key, _HOLDERS) or prim.key in (operator.add, operator.mul):
        return set(), every
    return set(), set()


def _may_return_part(key, value) -> bool:
    """A NumPy function or array method whose result may share memory with
    its arguments or receiver."""
    if not isinstance(value, gast.Call):
        return False
    if isinstance(key, registry.Method):
        return not fresh.method_makes_new_array(value)
    return fresh.is_numpy(key) and not fresh.makes_new_array(key, value)


def _copy(alias: dict) -> dict:
    return {name: set(params) for name, params in alias.items()}


def _join(a: dict, b: dict) -> dict:
    return {name: a.get(name, set()) | b.get(name, set()) for name in a.keys() | b.keys()}


_PARTS_OF = (operator.getitem, registry.Attr("T"), registry.Method("reshape"),
             registry.Method("ravel"), runtime.indexable)     # may share memory with it
# displays, and calls whose result may hold their arguments' objects
_HOLDERS = frozenset({registry.Literal("list"), registry.Literal("tuple"),
                      registry.Literal("dict"), builtins.list, builtins.tuple, builtins.dict,
                      builtins.zip, builtins.enumerate, builtins.sorted, builtins.reversed,
                      builtins.iter, builtins.map, builtins.filter, registry.Method("items"),
                      registry.Method("values"), registry.Method("copy")})
_ITEMS = "items"        # alias[(_ITEMS, name)]: the parameters `name`'s items may be
