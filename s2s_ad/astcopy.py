"""Deep copies of gast trees (`clone`), optionally replacing nodes on the way.

What: `clone(node)` copies a node, a list of nodes or a whole tree, fields
and source locations included; `clone(node, substitute)` also replaces each
node for which `substitute` returns one (templates.py instantiates rule
templates this way, in one copying pass).

Why a module of its own: copying is the compiler's hottest tree operation
(every template is cloned per use, every forward-sweep statement once), so
it is written for speed: a new node's `__dict__` is filled from the old
one's without running gast's constructors, many times faster than
`copy.deepcopy`.  It needs no knowledge of any node's fields, so a change
in gast's node layout cannot break it, and building nodes by their fields
stays astutil.py's alone (tests/test_astutil_only_builder.py); astutil
re-exports `clone`, the name every pass uses.

Invariants: a copy shares no node with its original except the field-less
expression contexts (`Load`, `Store`, `Del`), which are shared; a
substituted node is used as given and not descended into; the original is
never changed.
"""
from __future__ import annotations

import gast

_CONTEXTS = frozenset({gast.Load, gast.Store, gast.Del})
_AST = gast.AST


def clone(node, substitute=None):
    """A deep copy of `node` (a node or a list of nodes); where
    `substitute(n)` gives a node for a node `n` of it, that node instead."""
    if type(node) is list:
        return [clone(n, substitute) for n in node]
    cls = type(node)
    if cls in _CONTEXTS or not isinstance(node, _AST):
        return node
    if substitute is not None:
        new = substitute(node)
        if new is not None:
            return new
    new = cls.__new__(cls)
    fields = new.__dict__
    for key, value in node.__dict__.items():
        if type(value) is list:
            fields[key] = [clone(v, substitute) for v in value]
        elif isinstance(value, _AST):
            fields[key] = clone(value, substitute)
        else:
            fields[key] = value
    return new
