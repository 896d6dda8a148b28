"""Traversals of gast trees: every node in order (`walk`, `nodes`), the
`Name` nodes (`names`), bottom-up and in-place rewrites (`transform`,
`rewrite_children`), and line numbers for printing (`number_lines`).

The compiler's passes walk generated code of thousands of statements many
times over, so these are written for speed: each traversal is, per node
class, a function of straight-line code generated on first use
(`_PerClass`), reading the node's fields by attribute and calling the
function of each child's class; nothing dispatches on method names the way
`ast.NodeVisitor` does, and no loop runs over field names.  The recursive
ones (all but `walk`) recurse once per level of nesting: the depth of an
expression or of a statement's nesting is small.  Nodes are only visited
or replaced here, never built (astutil.py builds them).
"""
from __future__ import annotations

from typing import Callable, Iterator

import gast

_AST = gast.AST
_NAME = gast.Name
_CONSTANT = gast.Constant


def _child_fields(cls) -> tuple:
    """The fields of `cls` that may hold nodes (not `ctx`, `type_comment`)."""
    return tuple(f for f in cls._fields if f not in ("ctx", "type_comment"))


class _PerClass(dict):
    """{node class: its generated function}, made on first lookup.

    `lines(fields)` gives the body of `def f(node, arg)`, after the lines
    binding `c_<field>` to each child field (by attribute, all at once; for
    a node built without an optional field, `getattr`, None).  In the body,
    `table` is this table: `table[type(n)](n, arg)` is the function for
    another node.  Fields named in `skip` are not read."""

    def __init__(self, label: str, lines: Callable[[tuple], list], skip: tuple = ()):
        super().__init__()
        self.label, self.lines, self.skip = label, lines, skip

    def __missing__(self, cls):
        fields = tuple(f for f in _child_fields(cls) if f not in self.skip)
        reads = ["    try:", *(f"        c_{f} = node.{f}" for f in fields),
                 "    except AttributeError:",
                 *(f"        c_{f} = getattr(node, {f!r}, None)" for f in fields)]
        text = "\n".join(["def f(node, arg):", *(reads if fields else []),
                          *self.lines(fields), "    return None"])
        namespace = {"AST": _AST, "Name": _NAME, "Constant": _CONSTANT, "table": self}
        exec(compile(text, f"<{self.label} {cls.__name__}>", "exec"), namespace)
        self[cls] = namespace["f"]
        return self[cls]


def _each_child(field: str, do: list, index: bool = False) -> list:
    """Lines running `do` (lines using `item`) for each node the field
    holds, itself or in its list; `index`: `i` is its place in the list
    (None for a node held directly)."""
    def indent(n):
        return ["    " * n + line for line in do]
    loop = "for i, item in enumerate(child):" if index else "for item in child:"
    return [f"    child = c_{field}", "    if type(child) is list:", "        " + loop,
            "            if isinstance(item, AST):", *indent(4),
            "    elif child is not None and isinstance(child, AST):",
            "        item = child", *(["        i = None"] if index else []), *indent(2)]


# -- walk: a generator, for passes that change the tree as they go ------------
def walk(node) -> Iterator[gast.AST]:
    """Every node of the tree under `node` (a node or a list of them), the
    node first, then its children depth first, in field order (source
    order, mostly).  `gast.walk`'s nodes in another order, without the
    expression contexts (`Load`, `Store`), and several times faster.  A
    node's children are read when it is reached: a pass may replace them
    before."""
    stack = list(reversed(node)) if isinstance(node, list) else [node]
    pop, push, pushers = stack.pop, stack.append, _PUSHERS
    while stack:
        node = pop()
        yield node
        pushers[type(node)](node, push)


def walk_outside(body: list, scopes: tuple) -> Iterator[gast.AST]:
    """`walk` of the nodes `body`, not descending into a node of a class
    in `scopes` (a nested function's own statements), which is yielded."""
    stack = list(reversed(body))
    pop, push, pushers = stack.pop, stack.append, _PUSHERS
    while stack:
        node = pop()
        yield node
        if not isinstance(node, scopes):
            pushers[type(node)](node, push)


def children(node) -> list:
    """The nodes `node` holds directly, in field order (not its expression
    context: what `gast.iter_child_nodes` gives but `Load`/`Store`)."""
    out: list = []
    _PUSHERS[type(node)](node, out.append)
    out.reverse()
    return out


# push a node's children, last first (so they pop in field order)
_PUSHERS = _PerClass("push", lambda fields: [
    line for f in reversed(fields) for line in [
        f"    child = c_{f}", "    if type(child) is list:",
        "        for item in reversed(child):",
        "            if isinstance(item, AST):", "                arg(item)",
        "    elif isinstance(child, AST):", "        arg(child)"]])


# -- whole lists, for passes that read a tree and change nothing meanwhile -----
def nodes(tree) -> list:
    """`list(walk(tree))`, several times faster."""
    out: list = []
    for node in tree if isinstance(tree, list) else (tree,):
        if isinstance(node, _AST):
            _LISTERS[type(node)](node, out)
    return out


_LISTERS = _PerClass("nodes", lambda fields: ["    arg.append(node)"] + [
    line for f in fields for line in _each_child(f, ["table[type(item)](item, arg)"])])


def names(node) -> list:
    """The `Name` nodes under `node` (a node or a list), in `walk`'s order
    (the passes ask what each statement reads and binds many times over)."""
    out: list = []
    for item in node if isinstance(node, list) else (node,):
        if isinstance(item, _AST):
            _NAMES[type(item)](item, out)
    return out


# a Name is collected, and its annotation (a parameter's) walked; a constant
# holds no name, nor does an operator field (`op`, `ops`), which is not read
_NAMES = _PerClass("names", lambda fields: [
    line for f in fields for line in [
        f"    child = c_{f}", "    if type(child) is list:", "        for item in child:",
        *("        " + line for line in _NAME_OF_ITEM), "    else:", "        item = child",
        *("    " + line for line in _NAME_OF_ITEM)]], skip=("op", "ops"))


# (`names`' lines for one child `item`, of any type, at the indent of a loop body)
_NAME_OF_ITEM = [
    "    kind = type(item)", "    if kind is Name:", "        arg.append(item)",
    "        try:", "            note = item.annotation",      # (no getattr call per name)
    "        except AttributeError:", "            note = None",
    "        if note is not None:", "            table[type(note)](note, arg)",
    "    elif kind is not Constant and isinstance(item, AST):", "        table[kind](item, arg)"]


def _names_of_name(node, out: list) -> None:
    """`names` of a `Name` (given itself, or an annotation): it, and its
    annotation's."""
    out.append(node)
    if getattr(node, "annotation", None) is not None:
        _NAMES[type(node.annotation)](node.annotation, out)


_NAMES[_NAME] = _names_of_name


# -- rewrites ------------------------------------------------------------------
def transform(node, visit):
    """`node` with every node under it rewritten bottom-up, in place where
    the parents stay: each child is replaced by its own transform, then the
    node by `visit(node)` (the node itself to keep it).  A `NodeTransformer`
    without the per-node method dispatch."""
    return _TRANSFORMERS[type(node)](node, visit)


_TRANSFORMERS = _PerClass("transform", lambda fields: [
    line for f in fields for line in _each_child(f, [
        "new = table[type(item)](item, arg)",
        "if i is None:", f"    node.{f} = new", "else:", "    child[i] = new"], index=True)
] + ["    return arg(node)"])


def rewrite_children(tree, replace) -> None:
    """Every node under `tree` replaced, in place, by `replace(node)` (the
    node itself to keep it); what a replacement holds is not visited (the
    original's children are).  Each node's children are offered to
    `replace` in field order, parents in `walk`'s order."""
    for node in tree if isinstance(tree, list) else (tree,):
        if isinstance(node, _AST):
            _REWRITERS[type(node)](node, replace)


_REWRITERS = _PerClass("rewrite", lambda fields: ["    kids = []"] + [
    line for f in fields for line in _each_child(f, [
        "new = arg(item)",
        "if new is not item:",
        "    if i is None:", f"        node.{f} = new", "    else:", "        child[i] = new",
        "kids.append(item)"], index=True)
] + ["    for kid in kids:", "        table[type(kid)](kid, arg)"])


# -- statements ------------------------------------------------------------------
def number_lines(tree) -> None:
    """Give each statement under `tree` that has none a line number, in
    place: gast's unparser reads it (for type comments), and only there
    (cheaper than `fix_missing_locations`, which locates every node)."""
    for node in statements_in(tree):
        if isinstance(node, gast.stmt) and not hasattr(node, "lineno"):
            node.lineno = 1


def statements_in(tree) -> Iterator[gast.AST]:
    """`tree` and the statements and handlers nested in it, in no set
    order (a statement is never inside an expression)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if type(inner) is list:
                todo.extend(inner)
