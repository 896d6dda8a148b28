"""Traversals of gast trees: every node in order (`walk`), bottom-up and
in-place rewrites (`transform`, `rewrite_children`), and line numbers for
printing (`number_lines`).

The compiler's passes walk generated code of thousands of statements many
times over, so these are written for speed: child fields are looked up once
per node class, and nothing dispatches on method names the way
`ast.NodeVisitor` does.  Nodes are only visited or replaced here, never
built (astutil.py builds them).
"""
from __future__ import annotations

from typing import Iterator

import gast

_AST = gast.AST


def walk(node) -> Iterator[gast.AST]:
    """Every node of the tree under `node` (a node or a list of them), the
    node first, then its children depth first, in field order (source
    order, mostly).  `gast.walk`'s nodes in another order, without the
    expression contexts (`Load`, `Store`), and several times faster: the
    passes walk generated code of thousands of statements repeatedly."""
    stack = list(reversed(node)) if isinstance(node, list) else [node]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        yield node
        _push_children(node, push)


def _push_children(node, push) -> None:
    """Push the nodes `node` holds, last first (so they pop in field order)."""
    pusher = _PUSHERS.get(type(node))
    if pusher is None:
        pusher = _PUSHERS[type(node)] = _pusher(type(node))
    pusher(node, push)


_CHILD_FIELDS: dict = {}
_PUSHERS: dict = {}


def _child_fields(cls) -> tuple:
    """The fields of `cls` that may hold nodes (not `ctx`, `type_comment`)."""
    fields = _CHILD_FIELDS[cls] = tuple(
        f for f in cls._fields if f not in ("ctx", "type_comment"))
    return fields


def _pusher(cls):
    """`_push_children` for nodes of class `cls`: straight-line code reading
    each of its fields by name (a loop over the field names costs twice as
    much, and the passes push about a million children per 1,000-statement
    compile).  A field may hold a node, a list of them, or anything else."""
    lines = ["def push_children(node, push):"]
    for field in reversed(_CHILD_FIELDS.get(cls) or _child_fields(cls)):
        lines += [f"    child = getattr(node, {field!r}, None)",
                  "    if type(child) is list:",
                  "        for item in reversed(child):",
                  "            if isinstance(item, AST):",
                  "                push(item)",
                  "    elif isinstance(child, AST):",
                  "        push(child)"]
    namespace = {"AST": _AST}
    exec(compile("\n".join(lines + ["    return None"]), f"<push {cls.__name__}>", "exec"),
         namespace)
    return namespace["push_children"]


def transform(node, visit):
    """`node` with every node under it rewritten bottom-up, in place where
    the parents stay: each child is replaced by its own transform, then the
    node by `visit(node)` (the node itself to keep it).  A `NodeTransformer`
    without the per-node method dispatch, for expressions (recursive: their
    depth is small)."""
    fields = _CHILD_FIELDS.get(type(node))
    for field in _child_fields(type(node)) if fields is None else fields:
        child = getattr(node, field, None)
        if type(child) is list:
            for i, item in enumerate(child):
                if isinstance(item, _AST):
                    child[i] = transform(item, visit)
        elif isinstance(child, _AST):
            setattr(node, field, transform(child, visit))
    return visit(node)


def rewrite_children(tree, replace) -> None:
    """Every node under `tree` replaced, in place, by `replace(node)` (the
    node itself to keep it); what a replacement holds is not visited.  A
    stack-based `NodeTransformer` for passes over thousands of statements."""
    for node in list(walk(tree)):
        for field in _CHILD_FIELDS[type(node)]:     # (filled by `walk`)
            child = getattr(node, field, None)
            if type(child) is list:
                for i, item in enumerate(child):
                    if isinstance(item, _AST):
                        new = replace(item)
                        if new is not item:
                            child[i] = new
            elif isinstance(child, _AST):
                new = replace(child)
                if new is not child:
                    setattr(node, field, new)


def names(node) -> list:
    """The `Name` nodes under `node` (a node or a list), in `walk`'s order:
    `walk` filtered, without a generator's cost per node (the passes ask
    what each statement reads and binds many times over)."""
    out = []
    stack = list(reversed(node)) if isinstance(node, list) else [node]
    pop, push, name = stack.pop, stack.append, gast.Name
    while stack:
        node = pop()
        if type(node) is name:
            out.append(node)        # (its annotation, if any, is walked too)
        _push_children(node, push)
    return out


def number_lines(tree) -> None:
    """Give each statement under `tree` that has none a line number, in
    place: gast's unparser reads it (for type comments), and only there
    (cheaper than `fix_missing_locations`, which locates every node)."""
    for node in walk(tree):
        if isinstance(node, gast.stmt) and not hasattr(node, "lineno"):
            node.lineno = 1
