"""What a function of the user's does to its arguments, read from its source.

`mutated_parameters(f)` lists the parameters `f` updates in place: surely
(`p[i] = v`, `p.sort()`, `f(..., out=p)`, `np.add.at(p, ...)`, also through
a local bound to `p` or to a view of it) or by augmenting them (`p += v`,
in place only when `p` is an array, list or dict).  Callers use it to
refuse calls whose update they could see (reverse_forward.py), to copy
their own parameters, and to notice updates hidden inside `stop_gradient`.

Invariant: syntactic and conservative; a function without source mutates
nothing it can tell of.
"""
from __future__ import annotations

import functools
import textwrap
import types

import gast

from . import astutil, scopes
from .frontend import is_library, source_lines

_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "fill",
             "update", "setdefault", "popitem", "put", "resize", "itemset", "partition"}


_MUTATING_CALLS = {"copyto", "fill_diagonal", "put", "place", "putmask", "at", "shuffle"}


def mutated_parameters(func, depth: int = 8) -> tuple[frozenset, frozenset]:
    """(parameters the user function `func` surely updates in place if they
    are arrays: `p[i] = v`, `p.sort()`, `f(..., out=p)`, `np.add.at(p, ...)`,
    or by passing them to a function of the user's that does; parameters it
    augments, `p += v`, in place only for mutable values), read from its
    source; nothing for a function without one."""
    code = getattr(func, "__code__", None)
    if code is None or is_library(func):    # a library's own business
        return frozenset(), frozenset()
    surely, augmented, calls = _mutated(code)
    if depth:
        surely = surely | _passed_on(func, calls, depth)
    return surely, augmented - surely


def _passed_on(func, calls, depth: int) -> frozenset:
    """The parameters `func` passes to a callee (of its module) that may
    update the argument in place."""
    out = set()
    for callee_name, params in calls:
        callee = getattr(func, "__globals__", {}).get(callee_name)
        if isinstance(callee, types.FunctionType) and callee is not func and \
                any(mutated_parameters(callee, depth - 1)):
            out |= params
    return frozenset(out)


@functools.lru_cache(maxsize=512)
def _mutated(code) -> tuple[frozenset, frozenset, tuple]:
    try:
        tree = gast.parse(textwrap.dedent("".join(source_lines(code)[0])))
    except (OSError, TypeError, SyntaxError):
        return frozenset(), frozenset(), ()
    fdef = tree.body[0]
    if not isinstance(fdef, (gast.FunctionDef, gast.AsyncFunctionDef)):
        return frozenset(), frozenset(), ()
    params = {a.id for a in scopes.params(fdef.args)}
    copies = _copies(fdef, params)
    surely, augmented = set(), set()
    for node in astutil.walk(fdef):
        if isinstance(node, gast.AugAssign):
            (augmented if isinstance(node.target, gast.Name) else surely).add(
                _root(node.target))
        elif isinstance(node, gast.Assign):
            surely.update(_root(t) for t in node.targets if not isinstance(t, gast.Name))
        elif isinstance(node, gast.Call):
            surely.update(_call_mutates(node))
    surely = {p for n in surely for p in copies.get(n, ())}
    augmented = {p for n in augmented for p in copies.get(n, ())}
    calls = tuple((node.func.id, frozenset(p for n in _arg_names(node)
                                           for p in copies.get(n, ())))
                  for node in astutil.walk(fdef)
                  if isinstance(node, gast.Call) and isinstance(node.func, gast.Name))
    return frozenset(surely & params), frozenset(augmented & params - surely), \
        tuple(c for c in calls if c[1])


def _copies(fdef, params: set) -> dict:
    """name -> the parameters it may be (views of): `v = p`, `v = p[1:]`,
    `v = p.T`, `k, v = (1.0, p)`, `for v in p`, and so on through other such names, so
    that updating v updates p."""
    pairs = []
    for node in astutil.walk(fdef):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                pairs += _bound_pairs(target, node.value)
        elif isinstance(node, gast.For):        # rows of `p`, also through enumerate & co.
            iters = [node.iter, *getattr(node.iter, "args", [])]
            pairs += [(n.id, _root(i)) for n in astutil.walk(node.target)
                      if isinstance(n, gast.Name) for i in iters if _root(i) is not None]
    copies = {p: {p} for p in params}
    grown = True
    while grown:                    # (sets only grow, within the parameters)
        grown = False
        for name, root in pairs:
            new = copies.get(root, set()) - copies.get(name, set())
            if new:
                copies.setdefault(name, set()).update(new)
                grown = True
    return copies


def _bound_pairs(target, value) -> list:
    """(name, the name its value may be or view) for one assignment target."""
    if isinstance(target, gast.Name):
        root = _root(value.func.value) if isinstance(value, gast.Call) and \
            isinstance(value.func, gast.Attribute) else _root(value)
        return [(target.id, root)] if root is not None else []
    if isinstance(target, (gast.Tuple, gast.List)) and \
            isinstance(value, (gast.Tuple, gast.List)) and len(target.elts) == len(value.elts):
        return [p for t, v in zip(target.elts, value.elts) for p in _bound_pairs(t, v)]
    return []


def _arg_names(call: gast.Call) -> set:
    return {_root(a) for a in [*call.args, *(k.value for k in call.keywords)]} - {None}


def _call_mutates(call: gast.Call) -> set:
    func = call.func
    if isinstance(func, gast.Attribute) and func.attr in _MUTATORS:
        return {_root(func.value)}
    out = {_root(k.value) for k in call.keywords if k.arg == "out"}
    if isinstance(func, gast.Attribute) and func.attr in _MUTATING_CALLS and call.args:
        out.add(_root(call.args[0]))
    return out


def _root(node):
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None
