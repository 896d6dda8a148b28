"""`del name` in a differentiated function: checked here, then dropped.

`del y` only unbinds a name.  The derived function keeps every value its
reverse sweep needs and frees the rest itself (release.py), so
normalization drops the statement.  That is faithful only where the
function never reads the name while it may be unbound: there Python
raises `NameError`, and the derived function must not quietly read the
old value instead.  `check` proves it with a may-analysis over the user's
source (the names possibly deleted at each point, joined over `if`
branches, loops to a fixpoint, `try` conservatively) and raises a located
`UnsupportedSyntaxError` at a read that may follow a `del` of its name.

Reads are resolved by Python's scopes: a nested function or lambda
reads a name of the function only where that name is free in it (not its
own parameter or local, nor bound by a function between them), and only
when it is called, which may be after the `del`; its defaults, decorators
and annotations are read where it is defined.  A comprehension reads the
function's names where it stands, except its own variables.

Conservative by design: `break`, `continue` and `return` are taken as
falling through, a name a nested function or lambda reads free may not be
deleted at all, and `del` of an item or attribute (a mutation) is refused.
A `del` inside a nested `def` unbinds that function's own local: its body
is checked as a function of its own.
Invariant: after `check` passes, dropping every `del name` leaves the
values the function computes unchanged.
"""
from __future__ import annotations

import gast

from . import scopes, traversal
from .errors import UnsupportedSyntaxError
from .ir import Source

_HINT = "assign the name again before reading it, or remove the `del`"


def check(src: Source) -> None:
    """Raise at the first read of a name that a `del` may have unbound."""
    _check_scope(src, src.tree.body)


def _check_scope(src: Source, body: list) -> None:
    """Check the function whose statements are `body`, then each `def`
    nested in it as a function of its own (its `del`s unbind its own
    locals), so that an error is located in the user's file, not in the
    lifted function's text."""
    own = list(_own_scope(body))
    if any(type(node) is gast.Delete for node in own):
        _refuse_captured(src, body)
        _Deletions(src).run(body, frozenset())
    for node in own:
        if type(node) is gast.FunctionDef:
            _check_scope(src, node.body)


def _refuse_captured(src: Source, body: list) -> None:
    """A nested function or lambda may run after the `del`: refuse a `del`
    of any name one of them reads free (from the function's scope)."""
    captured: dict = {}             # name -> its first read inside a nested function
    for read, function in _uses(body):
        if function is not None:
            captured.setdefault(read.id, read)
    for node in _own_scope(body):
        if type(node) is gast.Delete:
            for target in node.targets:
                if type(target) is gast.Name and target.id in captured:
                    line = src.locate(captured[target.id]).line
                    raise UnsupportedSyntaxError(
                        f"s2s_ad cannot differentiate `del {target.id}` here: a nested "
                        f"function or lambda reads `{target.id}` (line {line}), and may "
                        "run after it", src.locate(node),
                        hint="remove the `del`, or pass the value to the nested "
                             "function as an argument")


class _Deletions:
    """The walk: `run` maps the names possibly deleted before a block to
    those possibly deleted after it, raising at a read of one."""

    def __init__(self, src: Source):
        self.src = src
        self.where: dict = {}       # name -> the `del` that (last) deleted it

    def run(self, body: list, state: frozenset) -> frozenset:
        for stmt in body:
            state = self.step(stmt, state)
        return state

    def step(self, stmt, state: frozenset) -> frozenset:
        kind = type(stmt)
        if kind is gast.Delete:
            return self._delete(stmt, state)
        if kind is gast.If:
            state = self._simple(stmt.test, state)
            return self.run(stmt.body, state) | self.run(stmt.orelse, state)
        if kind in (gast.For, gast.While):
            return self._loop(stmt, state)
        if kind is gast.With:
            for item in stmt.items:
                state = self._simple(item, state)
            return self.run(stmt.body, state)
        if kind is gast.Try:
            return self._try(stmt, state)
        if kind is getattr(gast, "Match", None):
            state = self._simple(stmt.subject, state)
            return frozenset().union(state, *(self.run(case.body, state)
                                              for case in stmt.cases))
        return self._simple(stmt, state)

    def _delete(self, stmt, state: frozenset) -> frozenset:
        for target in stmt.targets:
            if type(target) is not gast.Name:
                raise UnsupportedSyntaxError(
                    "s2s_ad cannot differentiate `del` of an item or attribute "
                    "(it changes the container in place)", self.src.locate(stmt),
                    hint="build the container without the item instead (a "
                         "comprehension, or np.delete for an array)")
            self._read(target, state)     # deleting an unbound name raises too
            self.where[target.id] = stmt
            state = state | {target.id}
        return state

    def _loop(self, loop, state: frozenset) -> frozenset:
        """The head of a loop: what holds before it or after any round."""
        head = state
        while True:
            inner = self._simple(loop.iter if type(loop) is gast.For else loop.test, head)
            if type(loop) is gast.For:
                inner = self._simple(loop.target, inner)
            after = head | self.run(loop.body, inner)
            if after == head:
                return self.run(loop.orelse, head)
            head = after

    def _try(self, stmt, state: frozenset) -> frozenset:
        """Any prefix of the body may have run before a handler."""
        body = self.run(stmt.body, state)
        anywhere = state | body | {n.id for node in _own_scope(stmt.body)
                                   if type(node) is gast.Delete
                                   for n in node.targets if type(n) is gast.Name}
        ends = [self.run(stmt.orelse, body)]
        for handler in stmt.handlers:
            start = anywhere - {handler.name.id} if handler.name is not None else anywhere
            ends.append(self.run(handler.body, start))
        return self.run(stmt.finalbody, anywhere.union(*ends))

    def _simple(self, node, state: frozenset) -> frozenset:
        """A statement or expression without blocks: its reads happen
        before its stores (conservative for `:=`); a nested function's
        body reads nothing now (`_refuse_captured` covers its calls)."""
        if not state:
            return state
        for n, function in _uses(node):
            if function is None:
                self._read(n, state)
        if type(node) is gast.AugAssign and type(node.target) is gast.Name:
            self._read(node.target, state)
        return state - _own_stores(node)

    def _read(self, name: gast.Name, state: frozenset) -> None:
        if name.id in state:
            line = self.src.locate(self.where[name.id]).line
            raise UnsupportedSyntaxError(
                f"`{name.id}` may be read here after `del {name.id}` (line {line}) "
                f"unbound it: Python would raise NameError, and s2s_ad would read "
                f"the old value", self.src.locate(name), hint=_HINT)


_FUNCTIONS = (gast.FunctionDef, gast.Lambda)
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_SCOPES = (gast.Lambda, *_COMPREHENSIONS)


def _own_stores(node) -> set:
    """The names `node` binds in the function's own scope: not those of a
    nested function, lambda or comprehension (a `:=` in a comprehension is
    missed, which only keeps a name deleted: conservative)."""
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if type(n) is gast.FunctionDef:
            out.add(n.name)
            stack.extend(n.decorator_list + n.args.defaults)
            continue
        if isinstance(n, _SCOPES):
            continue
        if type(n) is gast.Name and type(n.ctx) is not gast.Load:
            out.add(n.id)
        stack.extend(c for c in gast.iter_child_nodes(n))
    return out


def _own_scope(nodes: list):
    """Every node of `nodes` but those inside a nested function or lambda
    (whose statements, `del` included, are that function's)."""
    return traversal.walk_outside(nodes, _FUNCTIONS)


def _uses(node, hidden: frozenset = frozenset(), within=None, out=None) -> list:
    """(name node, function) for each read in `node` (a node or a list) of
    a name of the function's own scope: `function` is None for a read made
    when `node` runs, else the outermost nested function or lambda whose
    calls make it.  A name a nested scope binds itself is `hidden` there."""
    out = [] if out is None else out
    kind = type(node)
    if kind is list:
        for item in node:
            _uses(item, hidden, within, out)
    elif kind is gast.Name:
        if type(node.ctx) is gast.Load and node.id not in hidden:
            out.append((node, within))
    elif kind in _FUNCTIONS:
        _uses(_at_definition(node), hidden, within, out)
        body = node.body if kind is gast.FunctionDef else [node.body]
        _uses(body, hidden | _locals(node, body), within or node, out)
    elif kind in _COMPREHENSIONS:
        inner = hidden
        for gen in node.generators:     # (the first iterable is read outside it)
            _uses(gen.iter, inner, within, out)
            inner = inner | scopes.bound_names(gen.target)
            _uses(gen.ifs, inner, within, out)
        parts = [node.key, node.value] if kind is gast.DictComp else [node.elt]
        _uses(parts, inner, within, out)
    elif isinstance(node, gast.AST):
        for child in gast.iter_child_nodes(node):
            _uses(child, hidden, within, out)
    return out


def _at_definition(function) -> list:
    """What a nested function evaluates where it is defined, in the
    enclosing scope: its defaults, and a def's decorators and annotations."""
    args = function.args
    parts = list(args.defaults) + [d for d in args.kw_defaults if d is not None]
    if type(function) is gast.FunctionDef:
        parts += function.decorator_list + [p.annotation for p in scopes.params(args)
                                            if p.annotation is not None]
        parts += [function.returns] if function.returns is not None else []
    return parts


def _locals(function, body: list) -> frozenset:
    """The names a nested function binds itself: its parameters and what
    its body binds in its own scope (a name it also reads stays its own:
    Python raises UnboundLocalError rather than read the enclosing one)."""
    own = {p.id for p in scopes.params(function.args)}
    return frozenset(own.union(*(_own_stores(part) for part in body)))
