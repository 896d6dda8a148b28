"""Deep copies of gast trees (`clone`), optionally replacing nodes on the way.

What: `clone(node)` copies a node, a list of nodes or a whole tree, fields
and source locations included; `clone(node, substitute)` also replaces each
node for which `substitute` returns one (templates.py instantiates rule
templates this way, in one copying pass).

Why a module of its own: copying is the compiler's hottest tree operation
(every template is cloned per use, every forward-sweep statement once), so
it is written for speed: per node class, a function of straight-line code
made on first use fills a new node's `__dict__` from the old one's without
running gast's constructors, then copies the fields `_fields` names that
hold nodes, dispatching on each child's class (no `isinstance` per value):
twice as fast as a loop over the `__dict__`, many times faster than
`copy.deepcopy`.  It reads the fields from each class's `_fields`, so a
change in gast's node layout cannot break it, and building nodes by their
fields stays astutil.py's alone (tests/test_astutil_only_builder.py);
astutil re-exports `clone`, the name every pass uses.

Invariants: a copy shares no node with its original except the field-less
expression contexts (`Load`, `Store`, `Del`), which are shared; a
substituted node is used as given and not descended into; the original is
never changed.
"""
from __future__ import annotations

import gast

_CONTEXTS = frozenset({gast.Load, gast.Store, gast.Del})


def clone(node, substitute=None):
    """A deep copy of `node` (a node or a list of nodes); where
    `substitute(n)` gives a node for a node `n` of it, that node instead."""
    if type(node) is list:
        return [_CLONERS[type(n)](n, substitute) for n in node]
    return _CLONERS[type(node)](node, substitute)


def _kept(value, substitute):
    """A value shared by copy and original: not a node, or a context."""
    return value


class _Cloners(dict):
    """{class: the function copying a value of it}, made on first lookup."""

    def __missing__(self, cls):
        if cls in _CONTEXTS or not issubclass(cls, gast.AST):
            self[cls] = _kept
            return _kept
        lines = ["def f(node, sub):", "    if sub is not None:", "        new = sub(node)",
                 "        if new is not None:", "            return new",
                 "    new = make(cls)", "    fields = new.__dict__",
                 "    fields.update(node.__dict__)"]
        for field in cls._fields:
            if field not in ("ctx", "type_comment"):
                lines += [f"    value = fields.get({field!r})",
                          "    if type(value) is list:",
                          f"        fields[{field!r}] = [table[type(v)](v, sub) for v in value]",
                          "    elif value is not None:",
                          f"        fields[{field!r}] = table[type(value)](value, sub)"]
        namespace = {"table": self, "cls": cls, "make": cls.__new__}
        exec(compile("\n".join(lines + ["    return new"]), f"<clone {cls.__name__}>", "exec"),
             namespace)
        self[cls] = namespace["f"]
        return self[cls]


_CLONERS = _Cloners()
