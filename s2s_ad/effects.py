"""What a function of the user's does to its arguments, read from its source.

`mutated_parameters(f)` lists the parameters `f` updates in place: surely
(`p[i] = v`, `p.sort()`, `f(..., out=p)`, `np.add.at(p, ...)`, also through
a local bound to `p`, to a view of it, or to a list, tuple or dict
holding it: `h = [1.0, p]; h[1] *= 2`) or by augmenting them (`p += v`,
in place only when `p` is an array, list or dict); after the body rebinds
`p` to a new object (`p = p.copy()`), its updates through `p` are not
the caller's.  Callers use it to
refuse calls whose update they could see (reverse_forward.py), to copy
their own parameters (param_copies.py), and to notice updates hidden
inside `stop_gradient`.
`mutated_nonlocals(f)` lists the global or closure state `f` may update
in place (`G[0] = v`, `LOG.append(v)`): a call of `f` given a local's value
is refused (normalize/inplace.py).  `outside_updates(fdef, scope)` finds
the global or closure arrays the function itself updates through a local
name bound to them (`e = G; e *= 2`), which normalization refuses.
Which NumPy calls make a new array is fresh.py's table, shared with the
alias analysis (normalize/views.py); whether a function of the user's
returns new objects is fresh_results.py.

Invariant: syntactic and conservative; a function without source mutates
nothing it can tell of, and returns nothing known to be fresh.
"""
from __future__ import annotations

import functools
import inspect
import textwrap
import types

import gast
import numpy as np

from . import astutil, gastparse, out_args, scopes, traversal
from .ir import INPLACE_OPERATORS, MUTATING_METHODS
from .frontend import is_library
from .fresh import is_numpy, makes_new_array, method_makes_new_array
from .sourcelines import source_lines



_MUTATING_CALLS = {"copyto", "fill_diagonal", "put", "put_along_axis", "place", "putmask", "at",
                   "shuffle"} | INPLACE_OPERATORS       # (NumPy's, and the operator module's)


def mutated_parameters(func, depth: int = 8) -> tuple[frozenset, frozenset]:
    """(parameters the user function `func` surely updates in place if they
    are arrays: `p[i] = v`, `p.sort()`, `f(..., out=p)`, `np.add.at(p, ...)`,
    or by passing them to a function of the user's that does; parameters it
    augments, `p += v`, in place only for mutable values), read from its
    source; nothing for a function without one."""
    code = getattr(func, "__code__", None)
    if code is None or is_library(func):    # a library's own business
        return frozenset(), frozenset()
    surely, augmented, calls = _mutated(code, func.__globals__)
    if depth:
        surely = surely | _passed_on(func, calls, depth)
    return surely, augmented - surely


def bind_call(func, call: gast.Call):
    """`call`'s argument nodes bound to the parameters of `func`
    (`inspect.BoundArguments`), or None where that is not known where the
    call is written (a `*t` or `**kw`) or Python would refuse the call."""
    if any(isinstance(a, gast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords):
        return None
    try:
        return inspect.signature(func).bind(*call.args, **{k.arg: k.value
                                                           for k in call.keywords})
    except (TypeError, ValueError):
        return None


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
def parsed(code):
    """The function definition `code` was compiled from, or None."""
    try:
        tree = gastparse.parse(textwrap.dedent("".join(source_lines(code)[0])))
    except (OSError, TypeError, SyntaxError):
        return None
    fdef = tree.body[0]
    return fdef if isinstance(fdef, (gast.FunctionDef, gast.AsyncFunctionDef)) else None


def _mutated(code, globals_: dict) -> tuple[frozenset, frozenset, tuple]:
    """`mutated_parameters` of the function with code `code` and globals
    `globals_`, without the callees (once per code object)."""
    held = _MUTATED.get(code)
    if held is None:
        if len(_MUTATED) > 512:
            _MUTATED.clear()
        held = _MUTATED[code] = _read_mutated(code, globals_)
    return held


_MUTATED: dict = {}


def _read_mutated(code, globals_: dict) -> tuple[frozenset, frozenset, tuple]:
    fdef = parsed(code)
    if fdef is None:
        return frozenset(), frozenset(), ()
    params = {a.id for a in scopes.params(fdef.args)}
    fdef = _rebound_apart(fdef, params)
    copies = _copies(fdef, params, globals_)
    # (`**opts` is a dict made per call, as a display is: `opts["k"] = v`
    # changes no caller's object, `opts["w"][0] = v` does)
    lists = _containers(fdef) | {a.id for a in (fdef.args.vararg, fdef.args.kwarg) if a}
    surely, augmented = _updated(fdef, lists, globals_)
    surely = {p for n in surely for p in copies.get(n, ())}
    augmented = {p for n in augmented for p in copies.get(n, ())}
    calls = tuple((node.func.id, frozenset(p for n in _arg_names(node, globals_)
                                           for p in copies.get(n, ())))
                  for node in traversal.walk(fdef)
                  if isinstance(node, gast.Call) and isinstance(node.func, gast.Name))
    return frozenset(surely & params), frozenset(augmented & params - surely), \
        tuple(c for c in calls if c[1])


def _updated(fdef, lists: frozenset, globals_: dict) -> tuple[set, set]:
    """(the names `fdef` surely updates in place, those it augments: `p
    += v`, in place for an array), updates of the containers `lists`
    themselves left out (`hid[0] = v`, `hid.append(v)` change no item)."""
    surely, augmented = set(), set()
    for node in traversal.walk(fdef):
        if isinstance(node, gast.AugAssign):
            if isinstance(node.target, gast.Name):      # (`hid += [v]`: the list)
                augmented.add(_root(_item_of(node.target, lists)))
            elif _item_of(node.target, lists) is None:  # (`hid[0] *= 2`: the item,
                augmented.add(_root(node.target))       # in place if an array)
            else:
                surely.add(_root(node.target))
        elif isinstance(node, gast.Assign):
            surely.update(_root(_item_of(t, lists)) for t in node.targets
                          if not isinstance(t, gast.Name))
        elif isinstance(node, gast.Call):
            surely.update(_call_mutates(node, lists, globals_))
    return surely, augmented


def _rebound_apart(fdef, params: set):
    """`fdef`, or a copy in which a parameter that a statement of the body
    rebinds (`K = K.copy()`, not inside an `if` or a loop) is another name
    from that binding on: what the body updates through the name later is
    the new object, not the caller's (the idiom of a defensive copy).  An
    alias taken before (`v = K`) still leads to the parameter."""
    rebound = {}
    for i, stmt in enumerate(fdef.body):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in params:
            rebound.setdefault(stmt.targets[0].id, i)
    if not rebound:
        return fdef
    fdef = astutil.clone(fdef)
    for name, at in rebound.items():
        later = [fdef.body[at].targets[0], *fdef.body[at + 1:]]
        for node in traversal.walk(later):
            if isinstance(node, gast.Name) and node.id == name:
                node.id = name + "'"        # (no identifier: no clash)
    return fdef


_MUTABLE = (np.ndarray, list, dict, set, bytearray)


def outside_updates(fdef, scope: dict) -> dict:
    """{a global or closure name -> a local of `fdef` through which `fdef`
    may update its object in place}: `e = G; e *= 2`, `e = {"g": G}["g"];
    e[0] = v`, `v = G[1:]; v += 1`, for a `G` that `scope` (the function's
    closure and globals) binds to an array, list, dict or set.  Read as
    a helper's parameters are (`_copies`, `_updated`: through copies,
    views, displays and calls not known to make a new array, `G.copy()`
    read as a parameter's method; a list or dict built here updated
    itself, `xs.append(v)`, changes no item); an update of the global's
    own name (`G[0] = v`) is the normalizer's to refuse."""
    bound = {a.id for a in scopes.params(fdef.args)} | scopes.stored_names(fdef)
    outside = {n.id for n in traversal.names(fdef) if n.id not in bound and
               isinstance(scope.get(n.id), _MUTABLE)}
    if not outside:
        return {}
    inside = {k: v for k, v in scope.items() if k not in outside}
    copies = _copies(fdef, outside, inside)
    surely, augmented = _updated(fdef, _containers(fdef), inside)
    found: dict = {}
    for root in sorted((surely | augmented) & bound):
        for name in sorted(copies.get(root, set()) & outside):
            found.setdefault(name, root)
    return found


def mutated_nonlocals(func, depth: int = 4) -> frozenset:
    """Names of global or closure state the user function `func` may update
    in place (`G[0] = v`, `LOG.append(v)`, `np.copyto(G, v)`), itself or
    through a function of its module it calls; read from its source."""
    code = getattr(func, "__code__", None)
    if code is None or is_library(func):
        return frozenset()
    written, calls = _nonlocal_writes(code)
    out = {n for n in written       # (`np.add(a, b)` reads like `items.add(a)`)
           if not isinstance(func.__globals__.get(n), types.ModuleType)}
    for name in calls if depth else ():
        callee = getattr(func, "__globals__", {}).get(name)
        if isinstance(callee, types.FunctionType) and callee is not func:
            out |= mutated_nonlocals(callee, depth - 1)
    return frozenset(out)


@functools.lru_cache(maxsize=512)
def _nonlocal_writes(code) -> tuple[frozenset, tuple]:
    """(roots updated in place that the function never binds, the names
    of the functions it calls)."""
    fdef = parsed(code)
    if fdef is None:
        return frozenset(), ()
    bound = {a.id for a in scopes.params(fdef.args)} | scopes.stored_names(fdef)
    calls = tuple(sorted({n.func.id for n in traversal.walk(fdef)
                          if isinstance(n, gast.Call) and isinstance(n.func, gast.Name)}))
    return frozenset(updated_roots(fdef.body) - bound), calls


def updated_roots(body: list) -> set:
    """The names `body` may update in place: assigned into (`t[0] = v`),
    augmented (`t *= h`: in place for an array), passed to a mutating
    method, `out=` or a NumPy mutator."""
    roots = set()
    for node in traversal.walk(body):
        if isinstance(node, gast.AugAssign):
            roots.add(_root(node.target))
        elif isinstance(node, gast.Assign):
            roots.update(_root(t) for t in node.targets if not isinstance(t, gast.Name))
        elif isinstance(node, gast.Call):
            roots.update(_call_mutates(node))
    return roots - {None}


def _copies(fdef, params: set, globals_: dict) -> dict:
    """name -> the parameters it may be (views of): `v = p`, `v = p[1:]`,
    `v = p.T`, `v = np.asarray(p)`, `v = f(p)` for any call not known to
    make a new array, `k, v = (1.0, p)`, `for v in p`, and so on through
    other such names, so that updating v updates p."""
    pairs = []
    for node in traversal.walk(fdef):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                pairs += _bound_pairs(target, node.value, globals_)
        elif isinstance(node, gast.For):        # rows of `p`, also through enumerate & co.
            iters = [node.iter, *getattr(node.iter, "args", [])]
            pairs += [(n.id, _root(i)) for n in traversal.walk(node.target)
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


def _bound_pairs(target, value, globals_: dict) -> list:
    """(name, a name its value may be or view) for one assignment target."""
    if isinstance(target, gast.Name):
        return [(target.id, root) for root in _may_be(value, globals_)]
    if isinstance(target, (gast.Tuple, gast.List)) and \
            isinstance(value, (gast.Tuple, gast.List)) and len(target.elts) == len(value.elts):
        return [p for t, v in zip(target.elts, value.elts)
                for p in _bound_pairs(t, v, globals_)]
    return []


def _may_be(value, globals_: dict) -> list:
    """The names whose object `value` may be or view: a name, what is
    subscripted or asked for an attribute, and for a call its receiver and
    arguments, unless it surely makes a new array (also read through a
    subscript or attribute of the call: `np.split(p, 2)[0]`; spread:
    `*(1.0, p)`)."""
    value = value.value if isinstance(value, gast.Starred) else value
    base = value
    while isinstance(base, (gast.Subscript, gast.Attribute)):
        base = base.value
    if isinstance(base, gast.Call) and base is not value:
        return _may_be(base, globals_)
    held = _held(value)
    if held is not None:            # a display or comprehension holds them
        return [r for e in held for r in _may_be(e, globals_)]
    if not isinstance(value, gast.Call):
        root = _root(value)
        return [root] if root is not None else []
    func = value.func
    callee = _global_value(func, globals_)
    if callee is not None:
        if is_numpy(callee) and makes_new_array(callee, value):
            return []
    elif isinstance(func, gast.Attribute) and method_makes_new_array(value):
        return []
    parts = ([func.value] if isinstance(func, gast.Attribute) else []) + \
        [*value.args, *(k.value for k in value.keywords)]
    return [r for part in parts for r in _may_be(part, globals_)]


def _containers(fdef) -> frozenset:
    """The names the function binds only to displays and comprehensions
    (`hid = [1.0, k]`): updating one (`hid[0] = v`, `hid += [v]`,
    `hid.append(v)`) changes the container, not the items it holds."""
    bound: dict = {}
    for node in traversal.walk(fdef):
        targets = node.targets if isinstance(node, gast.Assign) else \
            [node.target] if isinstance(node, (gast.For, gast.AnnAssign, gast.NamedExpr)) \
            else []             # (`hid += [v]` keeps a list a list)
        for target in targets:
            for name in traversal.walk(target):
                if isinstance(name, gast.Name) and isinstance(name.ctx, gast.Store):
                    built = isinstance(node, gast.Assign) and target is name and \
                        _held(node.value) is not None and not isinstance(node.value, gast.IfExp)
                    bound[name.id] = bound.get(name.id, True) and built
    params = {a.id for a in scopes.params(fdef.args)}
    return frozenset(n for n, built in bound.items() if built and n not in params)


def _item_of(target, lists: frozenset):
    """What an update of `target` changes in place: None for one of the
    containers `lists` itself or one of its slots replaced (`hid += [v]`,
    `hid[0] = v`), the target otherwise."""
    inner = target.value if isinstance(target, gast.Subscript) else target
    return None if isinstance(inner, gast.Name) and inner.id in lists else target


def _held(value):
    """What a display (`[1.0, p]`, `{"w": p}`), a conditional expression or a
    comprehension (`[r for r in p]`: its iterables) may hold or be, as
    expressions; None for anything else."""
    if isinstance(value, (gast.List, gast.Tuple, gast.Set)):
        return [e.value if isinstance(e, gast.Starred) else e for e in value.elts]
    if isinstance(value, gast.Dict):
        return list(value.values)
    if isinstance(value, gast.IfExp):
        return [value.body, value.orelse]
    if isinstance(value, (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)):
        return [g.iter for g in value.generators]
    return None


def _global_value(node, globals_: dict):
    """What a dotted name of globals (`np.sum`) is bound to, or None."""
    if isinstance(node, gast.Attribute):
        base = _global_value(node.value, globals_)
        return None if base is None else getattr(base, node.attr, None)
    return globals_.get(node.id) if isinstance(node, gast.Name) else None


def _arg_names(call: gast.Call, globals_: dict) -> set:
    """The names whose objects a call may pass, also spread, inside a
    display or through a call that may return them (`f(*(1.0, w))`,
    `f(*list((1.0, w)))`, `f(np.asarray(w))`, `f(**{"x": w})`)."""
    return {r for a in [*call.args, *(k.value for k in call.keywords)]
            for r in _may_be(a, globals_)}


def _call_mutates(call: gast.Call, lists=frozenset(), globals_=None) -> set:
    """The roots a call may update in place: a mutating method's receiver
    (or a module's: `np.add` reads like `items.add`, which the caller
    sorts out; not one of the containers `lists`: `xs.append(v)` changes
    no item), what it writes `out=` (also by position, where `globals_`
    tell the function: `np.sign(a, a)`), a NumPy mutator's first argument."""
    func = call.func
    out = {_root(k.value) for k in call.keywords if k.arg == "out"}
    if globals_ is not None:
        callee = _global_value(func, globals_)
        names = out_args.positional_names(callee) if callee is not None else \
            out_args.positional_names(None, func.attr) if isinstance(func, gast.Attribute) \
            else None
        at = out_args.out_position(names)
        if at is not None:
            out.update(_root(a) for a in call.args[at:at + names.count("out")])
    if isinstance(func, gast.Attribute) and func.attr in MUTATING_METHODS:
        out.add(_root(_item_of(func.value, lists)))
    if isinstance(func, gast.Attribute) and func.attr in _MUTATING_CALLS and call.args:
        out.add(_root(call.args[0]))
    return out


def _root(node):
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None
