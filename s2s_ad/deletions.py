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

Conservative by design: `break`, `continue` and `return` are taken as
falling through, a name a nested function or lambda reads may not be
deleted at all, and `del` of an item or attribute (a mutation) is refused.
Invariant: after `check` passes, dropping every `del name` leaves the
values the function computes unchanged.
"""
from __future__ import annotations

import gast

from .errors import UnsupportedSyntaxError
from .ir import Source
from .traversal import walk

_HINT = "assign the name again before reading it, or remove the `del`"


def check(src: Source) -> None:
    """Raise at the first read of a name that a `del` may have unbound."""
    if not any(type(node) is gast.Delete for node in walk(src.tree.body)):
        return
    _refuse_captured(src)
    _Deletions(src).run(src.tree.body, frozenset())


def _refuse_captured(src: Source) -> None:
    """A nested function or lambda may run after the `del`: refuse a `del`
    of any name one of them reads."""
    captured = {n.id for node in walk(src.tree.body)
                if isinstance(node, (gast.FunctionDef, gast.Lambda))
                for n in walk(node) if type(n) is gast.Name}
    for node in walk(src.tree.body):
        if type(node) is gast.Delete:
            for target in node.targets:
                if type(target) is gast.Name and target.id in captured:
                    raise UnsupportedSyntaxError(
                        f"s2s_ad cannot differentiate `del {target.id}` here: a nested "
                        f"function or lambda reads `{target.id}`, and may run after it",
                        src.locate(node), hint="remove the `del`")


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
        anywhere = state | body | {n.id for node in walk(stmt.body)
                                   if type(node) is gast.Delete
                                   for n in node.targets if type(n) is gast.Name}
        ends = [self.run(stmt.orelse, body)]
        for handler in stmt.handlers:
            start = anywhere - {handler.name.id} if handler.name is not None else anywhere
            ends.append(self.run(handler.body, start))
        return self.run(stmt.finalbody, anywhere.union(*ends))

    def _simple(self, node, state: frozenset) -> frozenset:
        """A statement or expression without blocks: its reads happen
        before its stores (conservative for `:=`)."""
        if not state:
            return state
        for n in walk(node):
            if type(n) is gast.Name and type(n.ctx) is gast.Load:
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


_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


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
