"""Folding: arithmetic on numeric literals, the identities `e * 1`, `1 * e`,
`e / 1`, `e ** 1`, `--e`, `e * -1`, and `a + -b` -> `a - b`.

An identity is not applied where it would make a right-hand side, or an
argument of a call in it (which the call may return as it is:
`rt.expand(g, z)`), a parameter or an array updated in place, or a view of
one (`y[:, 3] * 1.0`), or bind a name updated in place or written into an
array to another (`prev = row * 1.0` stays: `prev *= 2` must not write into
`row`; `t = y[:, 3] * 1.0; y[2] = t` must not write a view of `y` into
it), so neither an adjoint nor the primal gains an alias (`alias_unsafe`).
Invariants: the folded code computes the same values; a node a rule builds
is folded again at once, so one pass leaves nothing to fold (the optimizer
relies on each pass being idempotent).
"""
from __future__ import annotations

import operator

import gast

from . import astutil, scopes, traversal

_FOLDABLE = {gast.Add: operator.add, gast.Sub: operator.sub,
             gast.Mult: operator.mul, gast.Div: operator.truediv,
             gast.Pow: operator.pow}


def fold(fdef: gast.FunctionDef, unsafe: set[str], stmts=None) -> bool:
    """Fold every statement of `fdef`, or only `stmts` (folding is local to
    a statement: one that did not change since the last pass has nothing
    left to fold)."""
    folder = _Folder(unsafe)
    for stmt in scopes.statements(fdef.body) if stmts is None else stmts:
        for field in ("value", "test", "iter"):
            child = getattr(stmt, field, None)
            if isinstance(child, gast.expr):
                setattr(stmt, field, folder.top(child, stmt))
    return folder.changed


def squares(stmts: list) -> None:
    """`a ** 2` -> `a * a` (a name, 2 perhaps still `3.0 - 1`) in the
    derivative code `stmts`: a multiplication where Python scalars would call
    `pow`, the same square NumPy computes for arrays.  Not for the primal's
    own statements: for a float, `pow` may round otherwise."""
    def visit(node):
        if type(node) is gast.BinOp and type(node.op) is gast.Pow and \
                type(node.left) is gast.Name and arithmetic_value(node.right) == 2:
            return astutil.binop(node.left, gast.Mult, astutil.clone(node.left))
        return node
    for stmt in stmts:
        if isinstance(stmt, gast.Assign):
            stmt.value = traversal.transform(stmt.value, visit)


def arithmetic_value(node):
    """The number a literal, or `+ - *` on literals, comes to, else None
    (`3.0 - 1`: what folding will make of it)."""
    if type(node) is gast.BinOp and type(node.op) in (gast.Add, gast.Sub, gast.Mult):
        left, right = arithmetic_value(node.left), arithmetic_value(node.right)
        return None if left is None or right is None else \
            _FOLDABLE[type(node.op)](left, right)
    value = astutil.number_value(node)
    return value if type(value) in (int, float) else None


def alias_unsafe(fdef, nodes: list | None = None) -> set[str]:
    """Names an adjoint must not alias: the caller's arguments (a returned
    gradient could be one) and arrays updated in place, with their copies.
    Updated in place: a name subscripted or augmented as a target, passed
    as `out=`, passed to a call whose value is dropped (`np.add.at(w, i,
    v)`), or given to a call whose value it is bound to (`w = rt.restore(w,
    ...)`).  `nodes`: `traversal.nodes(fdef)`, if known."""
    unsafe, local, copies = _updated(fdef, traversal.nodes(fdef) if nodes is None else nodes)
    linked: dict = {}
    for target, sources in copies:
        for source in sources:
            if source in local or source in unsafe:
                linked.setdefault(target, []).append(source)
                linked.setdefault(source, []).append(target)
    todo = list(unsafe)
    while todo:
        for other in linked.get(todo.pop(), ()):
            if other not in unsafe:
                unsafe.add(other)
                todo.append(other)
    return unsafe


def _updated(fdef, nodes: list) -> tuple[set, set, list]:
    """(the parameters and the names updated in place, the names bound
    here, the copies `y = x`, `y = x[i]` that may share memory: (target,
    the names it may view)), of `nodes`, all of `fdef`'s."""
    args = fdef.args
    unsafe = {a.id for a in args.args + args.kwonlyargs + args.posonlyargs}
    local, copies = set(unsafe), []
    for node in nodes:
        kind = type(node)
        if kind is gast.Name:
            if type(node.ctx) is gast.Store:
                local.add(node.id)
        elif kind is gast.Assign:
            if type(node.targets[0]) is gast.Subscript and type(node.value) is gast.Name:
                unsafe.add(node.value.id)   # written into an array: its own (may view it)
            if scopes.is_simple_assign(node):
                copies.append((node.targets[0].id, _may_view(node.value)))
                if type(node.value) is gast.Call and node.targets[0].id in _may_view(node.value):
                    unsafe.add(node.targets[0].id)     # `w = rt.restore(w, ...)`: in place
        elif kind is gast.Expr:
            if type(node.value) is gast.Call:           # `np.add.at(w, ...)`: may update
                unsafe.update(_may_view(node.value))
        elif kind is gast.keyword:
            if node.arg == "out":
                unsafe.update(n.id for n in traversal.names(node.value))
        elif kind is gast.AugAssign:
            if type(node.target) is gast.Name:
                unsafe.add(node.target.id)
        elif kind is gast.Subscript and type(node.ctx) is gast.Store \
                and type(node.value) is gast.Name:
            unsafe.add(node.value.id)
    return unsafe, local, copies


def _may_view(value) -> list[str]:
    """The names whose memory `value` may share: `x`, `x[i]`, `x.T`, the
    items of a display (`[a, b]`: an item updated through the list is `a`),
    and for a call, its receiver and every argument that is a name (a
    function - `np.asarray(x)`, `np.split(x, 2)`, a helper - may return
    its argument or a view of it; which names are locals is checked by
    the caller)."""
    if isinstance(value, gast.Name):
        return [value.id]
    if isinstance(value, (gast.Subscript, gast.Attribute)) and isinstance(value.value, gast.Name):
        return [value.value.id]
    if isinstance(value, (gast.List, gast.Tuple, gast.Dict)):     # holds its items
        items = value.values if isinstance(value, gast.Dict) else value.elts
        items = [i.value if isinstance(i, gast.Starred) else i for i in items]
        return [i.id for i in items if isinstance(i, gast.Name)]
    if isinstance(value, gast.Call):
        func = value.func
        receiver = [func.value] if isinstance(func, gast.Attribute) else []
        return [a.id for a in receiver + value.args + [k.value for k in value.keywords]
                if isinstance(a, gast.Name)]
    return []


_VIEWS = (gast.Name, gast.Subscript, gast.Attribute)     # what may be an alias


class _Folder:
    changed = False
    roots: set = set()
    stmt = None

    def __init__(self, unsafe: set[str]):
        self.unsafe = unsafe

    def top(self, expr, stmt):
        self.stmt = stmt
        self.roots = _results(expr)
        return traversal.transform(expr, self._fold)

    def _binds_unsafe(self) -> bool:
        """The statement binds a name updated in place: it must not become
        another name's alias."""
        return isinstance(self.stmt, gast.Assign) and \
            bool(scopes.stored_names(self.stmt) & self.unsafe)

    def _fold(self, node):
        kind = type(node)
        if kind is gast.BinOp:
            return self._binop(node)
        if kind is gast.UnaryOp:
            return self._unary(node)
        return node

    def _unary(self, node):
        if isinstance(node.op, gast.USub):
            inner = node.operand
            if isinstance(inner, gast.UnaryOp) and isinstance(inner.op, gast.USub) and \
                    not self._aliases(node, inner.operand):
                self.changed = True
                return inner.operand
        return node

    def _aliases(self, node, kept) -> bool:
        """Whether folding the result `node` to `kept` would make an alias
        or a view where a fresh value was (`h = --x`, `h = x * 1.0`, then
        `h[0] = 5.0` must not write into `x`)."""
        return node in self.roots and isinstance(kept, _VIEWS) and \
            bool(set(_may_view(kept)) & self.unsafe or self._binds_unsafe())

    def _binop(self, node):
        left, right, op = node.left, node.right, type(node.op)
        left_value, right_value = astutil.number_value(left), astutil.number_value(right)
        if left_value is not None and right_value is not None and op in _FOLDABLE:
            try:
                value = _FOLDABLE[op](left_value, right_value)
            except (ArithmeticError, ValueError, OverflowError):
                return node
            if isinstance(value, (int, float)) and abs(value) < 1e15:
                self.changed = True
                return astutil.const(value)
            return node
        if isinstance(node.op, (gast.Add, gast.Sub)) and isinstance(right, gast.UnaryOp) \
                and isinstance(right.op, gast.USub):
            self.changed = True     # a + -b  ->  a - b
            return self._binop(astutil.binop(left, gast.Sub if op is gast.Add else gast.Add,
                                             right.operand))
        if op in (gast.Mult, gast.Div) and isinstance(left, gast.UnaryOp) \
                and isinstance(left.op, gast.USub):
            self.changed = True     # (-a) * b  ->  -(a * b), for `c + -(...)`
            return self._unary(astutil.neg(self._binop(
                astutil.binop(left.operand, node.op, right))))
        one = right_value == 1 and op in (gast.Mult, gast.Div, gast.Pow)
        if one or (left_value == 1 and op is gast.Mult):
            kept = left if one else right
            if self._aliases(node, kept):
                return node         # keep a fresh value rather than an alias or a view
            self.changed = True
            return kept
        if right_value == -1 and op is gast.Mult:
            self.changed = True
            return self._unary(astutil.neg(left))
        return node


def _results(expr) -> set:
    """The nodes whose value `expr` may be itself or hold: `expr`, for a
    call, its arguments (`rt.unbroadcast(g, x)`, `rt.expand(g, z)` return
    `g` as it is where its shape is already right; a NumPy function or a
    helper may return an argument), and the items of a display (`[x * 1.0]`
    holds the new array: folded to `[x]`, an update through the list would
    write `x`), theirs, and so on."""
    out, todo = set(), [expr]
    while todo:
        node = todo.pop()
        out.add(node)
        kind = type(node)
        if kind is gast.Call:
            todo.extend(node.args)
            todo.extend(k.value for k in node.keywords)
        elif kind is gast.List or kind is gast.Tuple or kind is gast.Set:
            todo.extend(node.elts)
        elif kind is gast.Dict:
            todo.extend(node.values)
        elif kind is gast.Starred:
            todo.append(node.value)
    return out

