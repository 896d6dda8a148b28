"""Clean-up passes over a generated function; each says whether it changed it.

- `propagate`: a generated name assigned once, at the top level, to a number
  or to another name that is itself never reassigned, is replaced by its
  value.  User-visible names (`protected`) are never propagated away.
- `fold`: arithmetic on numeric literals, the identities `e * 1`, `1 * e`,
  `e / 1`, `e ** 1`, `--e`, and `a + -b` -> `a - b`.  An identity is not
  applied where it would make a right-hand side a bare parameter or an
  array updated in place, or bind a name updated in place to another
  (`prev = row * 1.0` stays: `prev *= 2` must not write into `row`), so
  neither an adjoint nor the primal gains an alias.
- `dead_code`: assignments whose target is never read, when the right-hand
  side is pure (no call, or a call into NumPy, math or the runtime); then
  blocks left empty.
- `copies`: `b = a` where `a = b` ran before in the same block and neither
  name was bound since (the reverse sweep's `dy_next = dy; dy = dy_next`).
- `inline`: a generated temporary read once, by the next statement, goes
  back into it (readability, and NumPy reuses the temporary in place).
- `empty_blocks`: `Block`s (a `# grad of:` comment and its code) left
  with no code.
- `tidy_blocks` (run on every generated function, optimized or not, as
  the last step before printing): no block is left empty.
  An `if` whose body has no code is inverted (`if not t: <else>`) or,
  with neither branch left, dropped (its test kept as a statement if it has
  effects); a loop whose body has no code gets `pass`; a block with no
  code goes.

Invariants: passes only remove or simplify; the result computes the same
values, and statements keep their order.  After `tidy_blocks` every block
holds at least one statement that is no empty `Block`, so the printed
code always compiles.  A `Block` is transparent to every pass: its
statements are the enclosing body's, in place.
"""
from __future__ import annotations

import operator
from typing import Callable

import gast

from . import astutil, scopes
from .dataflow import State, Walk

_FOLDABLE = {gast.Add: operator.add, gast.Sub: operator.sub,
             gast.Mult: operator.mul, gast.Div: operator.truediv,
             gast.Pow: operator.pow}


def optimize(fdef: gast.FunctionDef, protected: set[str],
             is_pure_call: Callable[[gast.Call], bool], temps: set[str]) -> gast.FunctionDef:
    unsafe = _alias_unsafe(fdef)    # only shrinks as code is removed
    for _ in range(20):
        changed = propagate(fdef, protected)
        changed |= fold(fdef, unsafe)
        changed |= dead_code(fdef, is_pure_call)
        changed |= copies(fdef)
        if not changed:
            break
    inline(fdef, temps - protected, is_pure_call)
    empty_blocks(fdef)
    return fdef


# -- no empty blocks ---------------------------------------------------------
def tidy_blocks(fdef: gast.FunctionDef, is_pure_call) -> None:
    """Leave no block without code: see the module docstring."""
    pure = _Purity(is_pure_call)

    def block(body: list) -> list:
        out = []
        for stmt in body:
            out.extend(tidy(stmt))
        return out

    def tidy(stmt) -> list:
        if isinstance(stmt, astutil.Block):
            stmt.body = block(stmt.body)
            return [stmt] if _has_code(stmt.body) else []
        if isinstance(stmt, gast.If):
            stmt.body, stmt.orelse = block(stmt.body), block(stmt.orelse)
            if not _has_code(stmt.orelse):
                stmt.orelse = []
            if _has_code(stmt.body):
                return [stmt]
            if stmt.orelse:         # `if t: <nothing> else: B` -> `if not t: B`
                return [astutil.if_(astutil.not_(stmt.test), stmt.orelse)]
            return [] if pure(stmt.test) else [astutil.expr_stmt(stmt.test)]
        if isinstance(stmt, (gast.For, gast.While)):
            stmt.body, stmt.orelse = block(stmt.body), block(stmt.orelse)
            if not _has_code(stmt.orelse):
                stmt.orelse = []
            if not _has_code(stmt.body):
                stmt.body = stmt.body + [astutil.pass_()]
        return [stmt]
    fdef.body = block(fdef.body)
    if not _has_code(fdef.body):
        fdef.body.append(astutil.pass_())


def _has_code(body: list) -> bool:
    return any(not isinstance(s, astutil.Block) or _has_code(s.body) for s in body)


# -- copies ------------------------------------------------------------------
def copies(fdef: gast.FunctionDef) -> bool:
    """Remove `b = a` where `a` and `b` already hold one object: `a = b` ran
    earlier in the same block and no statement between binds either."""
    changed = False

    def block(body: list) -> None:
        nonlocal changed
        same: dict = {}                     # name -> names holding its object
        for stmt, owner in list(astutil.flat(body)):      # (blocks are transparent)
            copy = _is_simple_assign(stmt) and isinstance(stmt.value, gast.Name)
            if copy and stmt.value.id in same.get(stmt.targets[0].id, ()):
                owner.remove(stmt)
                changed = True
                continue
            for name in scopes.bound_names(stmt):
                for other in same.pop(name, ()):
                    same[other].discard(name)
            if copy and stmt.targets[0].id != stmt.value.id:
                a, b = stmt.targets[0].id, stmt.value.id
                same.setdefault(a, set()).add(b)
                same.setdefault(b, set()).add(a)
            for child in ("body", "orelse"):
                if isinstance(getattr(stmt, child, None), list):
                    block(getattr(stmt, child))
    block(fdef.body)
    return changed


# -- inlining ----------------------------------------------------------------
def inline(fdef: gast.FunctionDef, temps: set[str], is_pure_call) -> bool:
    """Put a generated temporary read once, by the next statement, back into
    that statement: `_t1 = X @ W; h = np.tanh(_t1 + b)` becomes
    `h = np.tanh(X @ W + b)`.  It reads like the user's line again, and NumPy
    can reuse the temporary's buffer in place.  Both statements must be free
    of calls with effects, so evaluation order cannot matter."""
    pure = _Purity(is_pure_call)
    loads: dict[str, int] = {}
    for node in astutil.walk(fdef):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            loads[node.id] = loads.get(node.id, 0) + 1
    stores = _store_counts(fdef)
    changed = False

    def block(body: list) -> None:
        nonlocal changed
        i = 0
        while i < len(body) - 1:
            stmt, nxt = body[i], body[i + 1]
            for child in ("body", "orelse"):
                if isinstance(getattr(stmt, child, None), list):
                    block(getattr(stmt, child))
            if _inlinable(stmt, nxt, temps, loads, stores, pure):
                target = stmt.targets[0].id
                _replace_loads(nxt, {target: stmt.value})
                del body[i]
                changed = True
                i = max(i - 1, 0)
                continue
            i += 1
        if body:
            for child in ("body", "orelse"):
                if isinstance(getattr(body[-1], child, None), list):
                    block(getattr(body[-1], child))
    block(fdef.body)
    return changed


def _inlinable(stmt, nxt, temps, loads, stores, pure) -> bool:
    if not _is_simple_assign(stmt):
        return False
    target = stmt.targets[0].id
    if target not in temps or \
            loads.get(target) != 1 or stores.get(target) != 1 or not pure(stmt.value):
        return False
    if isinstance(nxt, (gast.Assign, gast.Expr, gast.Return, gast.AugAssign)):
        value = nxt.value
    elif isinstance(nxt, gast.If):
        value = nxt.test
    else:
        return False            # not into a loop header or body: it would repeat
    if not pure(value):
        return False
    return target in set(scopes.load_names(value))


# -- propagation -------------------------------------------------------------
def propagate(fdef: gast.FunctionDef, protected: set[str]) -> bool:
    counts = _store_counts(fdef)
    params = {a.id for a in fdef.args.args + fdef.args.kwonlyargs + fdef.args.posonlyargs}
    params |= _read_before_bound(fdef, counts)  # (a pair's seed: its backward's parameter)
    values: dict = {}
    operands = _operand_names(fdef)
    for stmt, owner in list(astutil.flat(fdef.body)):
        if not _is_simple_assign(stmt):
            continue
        target, value = stmt.targets[0].id, stmt.value
        if target in protected or target in params or counts.get(target) != 1:
            continue
        if isinstance(value, gast.Name):
            if counts.get(value.id, 0) + (value.id in params) != 1:
                continue
            value = values.get(value.id, value)     # follow a chain of copies
        elif not astutil.is_number(value):
            continue
        if astutil.is_number(value) and target in operands:
            continue
        values[target] = value
        owner.remove(stmt)
    if values:
        _replace_loads(fdef, values)
    return bool(values)


def _operand_names(fdef) -> set[str]:
    """Names read as what is indexed, called or asked for an attribute: a
    number put there would print `1.0[0]` (code after a run-time check that
    raises, e.g. the seed of a non-scalar output, still compiles quietly)."""
    return {node.value.id if not isinstance(node, gast.Call) else node.func.id
            for node in astutil.walk(fdef)
            if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(node.value, gast.Name)
            or isinstance(node, gast.Call) and isinstance(node.func, gast.Name)}


def _read_before_bound(fdef, counts: dict) -> set[str]:
    """Names read before the function binds them: bound by the caller (the
    seed of a pair's backward half), so a later assignment rebinds them."""
    bound, out = set(), set()
    for stmt, _ in astutil.flat(fdef.body):
        out |= {n for n in scopes.load_names(stmt) if n not in bound}
        bound |= scopes.stored_names(stmt)
    return out & set(counts)


def _is_simple_assign(stmt) -> bool:
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], gast.Name)


def _store_counts(fdef) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in astutil.walk(fdef):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _replace_loads(tree, values: dict) -> None:
    class Sub(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in values and isinstance(node.ctx, gast.Load):
                return astutil.clone(values[node.id])
            return node
    Sub().visit(tree)


# -- folding -----------------------------------------------------------------
def fold(fdef: gast.FunctionDef, unsafe: set[str]) -> bool:
    folder = _Folder(unsafe)
    for stmt in scopes.statements(fdef.body):
        # a target updated in place must not become another name's alias
        bound_unsafe = isinstance(stmt, gast.Assign) and \
            bool(scopes.stored_names(stmt) & unsafe)
        for field in ("value", "test", "iter"):
            child = getattr(stmt, field, None)
            if isinstance(child, gast.expr):
                setattr(stmt, field, folder.top(child, bound_unsafe))
    return folder.changed


def _alias_unsafe(fdef) -> set[str]:
    """Names an adjoint must not alias: the caller's arguments (a returned
    gradient could be one) and arrays updated in place, with their copies."""
    args = fdef.args
    unsafe = {a.id for a in args.args + args.kwonlyargs + args.posonlyargs}
    for node in astutil.walk(fdef):
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            unsafe.add(node.target.id)
        elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            unsafe.add(node.value.id)
    local = unsafe | {n.id for n in astutil.walk(fdef)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    linked: dict = {}               # `y = x`, `y = x[i]`: y and x may share memory
    for n in astutil.walk(fdef):
        if isinstance(n, gast.Assign) and _is_simple_assign(n):
            source = _may_view(n.value)
            if source in local:
                linked.setdefault(n.targets[0].id, []).append(source)
                linked.setdefault(source, []).append(n.targets[0].id)
    todo = list(unsafe)
    while todo:
        for other in linked.get(todo.pop(), ()):
            if other not in unsafe:
                unsafe.add(other)
                todo.append(other)
    return unsafe


def _may_view(value) -> str | None:
    """The name whose memory `value` may share: `x`, `x[i]`, `x.T`,
    `x.reshape(...)`, `np.asarray(x)`, `rt.indexable(x)`."""
    if isinstance(value, gast.Name):
        return value.id
    if isinstance(value, (gast.Subscript, gast.Attribute)) and isinstance(value.value, gast.Name):
        return value.value.id
    if isinstance(value, gast.Call):
        func = value.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
            return func.value.id                # a method of a local (or a module)
        if value.args and isinstance(value.args[0], gast.Name):
            return value.args[0].id             # a function that may return a view
    return None


class _Folder(gast.NodeTransformer):
    changed = False
    roots: set = set()
    bound_unsafe = False

    def __init__(self, unsafe: set[str]):
        self.unsafe = unsafe

    def top(self, expr, bound_unsafe: bool = False):
        # the value assigned, or what `rt.unbroadcast` may return as it is
        self.bound_unsafe = bound_unsafe
        self.roots = {expr}
        if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute) \
                and expr.func.attr == "unbroadcast" and expr.args:
            self.roots.add(expr.args[0])
        return self.visit(expr)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.USub):
            inner = node.operand
            if isinstance(inner, gast.UnaryOp) and isinstance(inner.op, gast.USub):
                self.changed = True
                return inner.operand
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right, op = node.left, node.right, type(node.op)
        if astutil.is_number(left) and astutil.is_number(right) and op in _FOLDABLE:
            try:
                value = _FOLDABLE[op](astutil.literal_value(left),
                                      astutil.literal_value(right))
            except (ArithmeticError, ValueError, OverflowError):
                return node
            if isinstance(value, (int, float)) and abs(value) < 1e15:
                self.changed = True
                return astutil.const(value)
            return node
        if isinstance(node.op, (gast.Add, gast.Sub)) and isinstance(right, gast.UnaryOp) \
                and isinstance(right.op, gast.USub):
            self.changed = True     # a + -b  ->  a - b
            return astutil.binop(left, gast.Sub if op is gast.Add else gast.Add, right.operand)
        if op in (gast.Mult, gast.Div) and isinstance(left, gast.UnaryOp) \
                and isinstance(left.op, gast.USub):
            self.changed = True     # (-a) * b  ->  -(a * b), for `c + -(...)`
            return astutil.neg(astutil.binop(left.operand, node.op, right))
        one = _is_one(right) and op in (gast.Mult, gast.Div, gast.Pow)
        if one or (_is_one(left) and op is gast.Mult):
            kept = left if one else right
            if node in self.roots and isinstance(kept, gast.Name) and \
                    (kept.id in self.unsafe or self.bound_unsafe):
                return node         # keep a fresh value rather than an alias
            self.changed = True
            return kept
        if _is_minus_one(right) and op is gast.Mult:
            self.changed = True
            return astutil.neg(left)
        return node


def _is_one(node) -> bool:
    return astutil.is_number(node) and astutil.literal_value(node) == 1 and \
        not isinstance(astutil.literal_value(node), bool)


def _is_minus_one(node) -> bool:
    return astutil.is_number(node) and astutil.literal_value(node) == -1


# -- dead code ---------------------------------------------------------------
def dead_code(fdef: gast.FunctionDef, is_pure_call) -> bool:
    """Remove pure assignments whose target is not live, then the ifs and
    loops left with no code and nothing to evaluate.  Liveness is a backward
    walk on the one walker (`dataflow.Walk`, loops to a fixpoint); a dead
    assignment reads nothing, so a chain of them goes in one pass."""
    pure = _Purity(is_pure_call)
    dead: dict = {}                 # assignment -> dead (its last visit decides)
    heads: dict = {}                # for loop -> names live at its head

    def transfer(stmt, live):
        if _is_simple_assign(stmt):
            target = stmt.targets[0].id
            dead[stmt] = target not in live and pure(stmt.value)
            return live if dead[stmt] else (live - {target}) | set(scopes.load_names(stmt.value))
        if isinstance(stmt, gast.For):
            heads[stmt] = live
            return (live - {stmt.target.id}) | set(scopes.load_names(stmt.iter))
        reads = set(scopes.load_names(stmt.test if isinstance(stmt, (gast.If, gast.While))
                                       else stmt))
        if isinstance(stmt, gast.AugAssign):    # `a += b` reads a too
            reads |= scopes.all_names(stmt.target)
        return live | reads

    def loop_entry(loop, live):     # the header is read on every iteration
        return live | set(scopes.load_names(loop.iter if isinstance(loop, gast.For)
                                             else loop.test))
    Walk(transfer, State.union, backward=True, loop_entry=loop_entry).run(fdef.body, State())
    return _remove(fdef, {s for s, is_dead in dead.items() if is_dead}, pure, heads)


def _remove(fdef, doomed: set, pure, heads: dict) -> bool:
    """Remove the statements `doomed`, then ifs and for loops left empty
    whose test or sequence has no effect (a loop whose target is read after
    it stays; a while loop always stays: it might not end)."""
    removed = False

    def block(body: list) -> list:
        nonlocal removed
        out = []
        for stmt in body:
            if stmt in doomed:
                removed = True
                continue
            for child in ("body", "orelse"):
                if isinstance(getattr(stmt, child, None), list):
                    setattr(stmt, child, block(getattr(stmt, child)))
            if _empty_control(stmt, pure, heads):
                removed = True
                continue
            out.append(stmt)
        return out
    fdef.body = block(fdef.body)
    return removed


def _empty_control(stmt, pure, heads: dict) -> bool:
    if isinstance(stmt, gast.If):
        return not stmt.body and not stmt.orelse and pure(stmt.test)
    if isinstance(stmt, gast.For):
        return not stmt.body and not stmt.orelse and pure(stmt.iter) \
            and stmt.target.id not in heads.get(stmt, ())
    return False


class _Purity:
    def __init__(self, is_pure_call):
        self.is_pure_call = is_pure_call

    def __call__(self, expr) -> bool:
        for node in astutil.walk(expr):
            if isinstance(node, gast.Call) and not self.is_pure_call(node):
                return False
            if isinstance(node, (gast.Yield, gast.YieldFrom, gast.Await, gast.NamedExpr)):
                return False
        return True


# -- empty blocks ------------------------------------------------------------
def empty_blocks(fdef: gast.FunctionDef) -> None:
    """Drop the `Block`s that hold no code (their comment would stand alone)."""
    def block(body: list) -> list:
        out = []
        for stmt in body:
            for child in ("body", "orelse"):
                if isinstance(getattr(stmt, child, None), list):
                    setattr(stmt, child, block(getattr(stmt, child)))
            if not isinstance(stmt, astutil.Block) or _has_code(stmt.body):
                out.append(stmt)
        return out
    fdef.body = block(fdef.body)
