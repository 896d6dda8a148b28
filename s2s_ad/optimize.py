"""Clean-up passes over a generated function; each says whether it changed it.

`optimize` runs them to a fixpoint; propagation and inlining live here,
the passes on copies in optimize_copies.py, folding in optimize_fold.py,
dead code and block tidying in optimize_dead.py.

- `propagate`: a generated name assigned once, at the top level, to a number
  or to another name that is itself never reassigned, is replaced by its
  value.  User-visible names (`protected`) are never propagated away, and a
  number is never put where it would be indexed, called or asked for an
  attribute.
- `copies`: `b = a` where `a = b` ran before in the same block and neither
  name was bound since (the reverse sweep's `dy_next = dy; dy = dy_next`).
- `forward_copies`: `b = a` where `b`, the adjoint of a temporary, is read
  only later in the same block, before `a` is rebound: the reads read `a`.
- `inline`: a generated temporary read once, by the next statement, goes
  back into it (readability, and NumPy reuses the temporary in place), and
  what that puts together is folded.

Invariants: passes only remove or simplify; the result computes the same
values, and statements keep their order.  Each pass is idempotent: run
twice in a row, the second finds nothing (the fixpoint relies on it).  A
`Block` is transparent to every pass: its statements are the enclosing
body's, in place.  The fixpoint is bounded; reaching the bound is an
`InternalError`.
"""
from __future__ import annotations

import itertools
from typing import Callable

import gast

from . import astutil, scopes, traversal
from .errors import InternalError
from .optimize_copies import copies, forward_copies, name_counts, signature
from .optimize_dead import Purity, dead_code, empty_blocks, tidy_blocks
from .optimize_fold import alias_unsafe, fold

__all__ = ["optimize", "tidy_blocks", "dead_code", "copies", "forward_copies"]

_ROUNDS = 20

# The passes a pass's change may give work to; to the others it cannot
# (tests/test_optimize_fixpoint.py checks that none has work left):
# - fold keeps every name a statement reads, and only folding can fold;
# - propagate folds the statements it puts a number into, but a copy it
#   removes may have been its source's last read;
# - forward_copies removes a copy only if its name is read, by reads that
#   now read the source: no read goes, no name is stored once more.
_ENABLES = {
    "propagate": ("dead_code", "copies", "forward_copies"),
    "fold": ("propagate", "copies", "forward_copies"),          # `b = a * 1` -> `b = a`
    "dead_code": ("propagate", "copies", "forward_copies"),     # fewer stores between
    "copies": ("propagate", "dead_code", "forward_copies"),
    "forward_copies": ("copies",),
}


def optimize(fdef: gast.FunctionDef, protected: set[str],
             is_pure_call: Callable[[gast.Call], bool], temps: set[str],
             temp_adjoints: dict, interleaved: bool = False) -> gast.FunctionDef:
    unchanged = [traversal.nodes(fdef)]     # fdef's nodes, while no pass has changed it
    unsafe = alias_unsafe(fdef, unchanged[0])   # only shrinks as code is removed
    disposable = set(temp_adjoints) - protected
    passes = {"propagate": lambda: propagate(fdef, protected, unsafe, unchanged[0]),
              "fold": lambda: fold(fdef, unsafe),
              "dead_code": lambda: dead_code(fdef, is_pure_call),
              "copies": lambda: copies(fdef),
              "forward_copies": lambda: forward_copies(fdef, disposable)}
    pending = dict.fromkeys(passes)     # (ordered) passes that may have work
    for step in range(_ROUNDS * len(passes)):
        name = list(passes)[step % len(passes)]
        if name in pending:
            del pending[name]       # (idempotent: its own change leaves it nothing)
            if passes[name]():
                unchanged[0] = None
                pending.update(dict.fromkeys(_ENABLES[name]))
        if not pending:
            break
    else:
        raise InternalError(f"the clean-up passes over `{fdef.name}` did not settle "
                            f"in {_ROUNDS} rounds")
    adjoints = None if interleaved else \
        {t: d for d, t in temp_adjoints.items() if d not in protected}     # (forward: in temps)
    inlined = inline(fdef, temps - protected, is_pure_call, interleaved, adjoints)
    fold(fdef, unsafe, inlined)     # a number inlined: `v * _ln_base1` -> `v * 1.0` -> `v`
    empty_blocks(fdef)
    return fdef


# -- inlining ----------------------------------------------------------------
def inline(fdef: gast.FunctionDef, temps: set[str], is_pure_call,
           interleaved: bool = False, adjoints: dict | None = None) -> list:
    """Put a generated temporary read once, by the next statement, back into
    that statement: `_t1 = X @ W; h = np.tanh(_t1 + b)` becomes
    `h = np.tanh(X @ W + b)`.  It reads like the user's line again, and NumPy
    can reuse the temporary's buffer in place.  Both statements must be free
    of calls with effects, so evaluation order cannot matter.  In
    `interleaved` code (forward mode: each primal statement followed by its
    tangent's), the reader may come later, past pure assignments that
    rebind nothing the temporary's value reads.  The adjoint of a temporary
    (`adjoints`: temporary -> its adjoint) goes so too once the temporary
    has gone (before it: the forward sweep comes first), so that no `d_t6`
    is left named after a `_t6` the code no longer has, but only where each
    name it reads is read again later: otherwise its array, which `release`
    frees before the reader allocates, would live through it.  Returns the
    statements that took a temporary in (those still in the code)."""
    held = {stmt: traversal.names(stmt) for stmt, _ in astutil.flat(fdef.body)}
    loads, stores = name_counts(itertools.chain.from_iterable(
        [*held.values(), traversal.names(signature(fdef))]))
    inliner = _Inliner(temps, loads, stores, Purity(is_pure_call), interleaved)
    if adjoints:
        inliner.adjoints, inliner.root, inliner.held = adjoints, fdef.body, held
    inliner.block(fdef.body)
    return list(inliner.changed)


class _Inliner:
    """`inline`'s walk over nested bodies (a method, not a closure calling
    itself: such a cycle would keep the statements it holds alive until
    the cyclic collector ran)."""

    def __init__(self, temps: set[str], loads: dict, stores: dict, pure, interleaved: bool):
        self.temps, self.loads, self.stores = temps, loads, stores
        self.pure, self.interleaved = pure, interleaved
        self.changed: dict = {}     # (ordered: a set of statements, in order)
        self.adjoints: dict = {}    # temporary -> its adjoint
        self.gone: set = set()      # the adjoints whose temporary has gone
        self.root: list = []        # the function's body
        self.lifetimes = None       # (made when first asked: most functions never do)
        # the `Name` nodes of each statement of `root` (blocks' in place), kept
        # up to date for `_Lifetimes`; None once a nested statement changed
        self.held: dict | None = None

    def block(self, body: list) -> None:
        i = 0
        while i < len(body) - 1:
            stmt = body[i]
            nxt = _reader(body, i, self.pure) if self.interleaved else body[i + 1]
            for child in ("body", "orelse"):
                if isinstance(getattr(stmt, child, None), list):
                    self.block(getattr(stmt, child))
            if self._inlinable(stmt, nxt):
                target = stmt.targets[0].id
                if target in self.adjoints:
                    self.gone.add(self.adjoints[target])
                _replace_loads(nxt, {target: stmt.value})
                if self.held is not None and self.lifetimes is None:
                    self.held = _renamed(self.held, nxt)
                del body[i]
                self.changed.pop(stmt, None)
                self.changed[nxt] = True
                i = max(i - 1, 0)
                continue
            i += 1
        if body:
            for child in ("body", "orelse"):
                if isinstance(getattr(body[-1], child, None), list):
                    self.block(getattr(body[-1], child))

    def _inlinable(self, stmt, nxt) -> bool:
        if _inlinable(stmt, nxt, self.temps, self.loads, self.stores, self.pure):
            return True
        if not (self.gone and scopes.is_simple_assign(stmt) and stmt.targets[0].id in self.gone
                and _inlinable(stmt, nxt, self.gone, self.loads, self.stores, self.pure)):
            return False
        if self.lifetimes is None:
            self.lifetimes = _Lifetimes(self.root, self.held)
        return self.lifetimes.outlive(stmt)


def _renamed(held: dict, stmt) -> dict | None:
    """`held` with the `Name` nodes of `stmt`, which took a temporary in,
    read again; None if `stmt` is not one of its statements (but nested in
    one, whose names it changed)."""
    if stmt not in held:
        return None
    held[stmt] = traversal.names(stmt)
    return held


class _Lifetimes:
    """Where each name is last read, among the statements of a body with
    those of its blocks in place (as `release` frees them); `held`: each
    one's `Name` nodes, if known."""

    def __init__(self, body: list, held: dict | None = None):
        flat = [stmt for stmt, _ in astutil.flat(body)]
        self.position = {stmt: i for i, stmt in enumerate(flat)}
        self.last = scopes.last_reads(flat, None if held is None else [held[s] for s in flat])

    def outlive(self, stmt) -> bool:
        """Whether each name `stmt` reads is read again after it."""
        at = self.position.get(stmt)
        return at is not None and all(self.last.get(n, -1) > at
                                      for n in scopes.load_names(stmt.value))


def _reader(body: list, i: int, pure) -> gast.stmt:
    """The first statement after `body[i]` that reads its target, if only
    pure assignments binding no name `body[i]` reads or binds come between;
    else the next statement."""
    stmt = body[i]
    if not scopes.is_simple_assign(stmt):
        return body[i + 1]
    target = stmt.targets[0].id
    fixed = set(scopes.load_names(stmt.value)) | {target}
    for later in body[i + 1:]:
        if target in scopes.load_names(later) or not scopes.is_simple_assign(later) or \
                later.targets[0].id in fixed or not pure(later.value):
            return later
    return body[i + 1]


def _inlinable(stmt, nxt, temps, loads, stores, pure) -> bool:
    if not scopes.is_simple_assign(stmt):
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
def propagate(fdef: gast.FunctionDef, protected: set[str], unsafe: set[str],
              nodes: list | None = None) -> bool:
    """Propagate names and numbers (module docstring).  A statement given a
    number is folded at once, so what it comes to is propagated in the same
    pass (`d = 1.0; e = d * 0.5; f = e * x` -> `f = 0.5 * x`; `unsafe`:
    `fold`'s; `nodes`: `traversal.nodes(fdef)`, if known)."""
    stmts = list(astutil.flat(fdef.body))
    if not any(_starts_propagation(stmt, protected) for stmt, _ in stmts):
        return False        # (nothing to propagate: no need to count the names)
    read = [traversal.names(stmt) for stmt, _ in stmts]   # (each statement's, once)
    counts, early = _stores_and_early_reads(read, traversal.names(signature(fdef)))
    numbers = any(scopes.is_simple_assign(stmt) and astutil.is_number(stmt.value)
                  for stmt, _ in stmts)
    operands = _operands(traversal.nodes(fdef) if nodes is None else nodes) \
        if numbers else set()       # (asked only of a number's target)
    params = {a.id for a in fdef.args.args + fdef.args.kwonlyargs + fdef.args.posonlyargs}
    params |= early             # (a pair's seed: its backward's parameter)
    values: dict = {}
    for (stmt, owner), names in zip(stmts, read):
        if values and _replace_loads(stmt, values, names):     # (read after its store)
            fold(fdef, unsafe, [stmt])
        if not scopes.is_simple_assign(stmt):
            continue
        target, value = stmt.targets[0].id, stmt.value
        if target in protected or target in params or counts.get(target) != 1:
            continue
        if isinstance(value, gast.Name):
            if counts.get(value.id, 0) + (value.id in params) != 1:
                continue
        elif not astutil.is_number(value):
            continue
        if astutil.is_number(value) and target in operands:
            continue
        values[target] = value
        owner.remove(stmt)
    return bool(values)


def _operands(nodes: list) -> set:
    """The names read, among `nodes` (a function's), as what is indexed,
    called, asked for an attribute or compared by identity.  A number put where an operand is would print
    `1.0[0]` (code after a run-time check that raises, e.g. the seed of a
    non-scalar output, still compiles quietly) or `0.5 is None` (a
    SyntaxWarning)."""
    operands: set = set()
    name = gast.Name
    for node in nodes:
        kind = type(node)
        if kind is gast.Call:
            if type(node.func) is name:
                operands.add(node.func.id)
        elif (kind is gast.Subscript or kind is gast.Attribute) and type(node.value) is name:
            operands.add(node.value.id)
        elif kind is gast.Compare and any(type(op) in (gast.Is, gast.IsNot) for op in node.ops):
            operands.update(n.id for n in [node.left, *node.comparators] if type(n) is name)
    return operands


def _starts_propagation(stmt, protected: set[str]) -> bool:
    """`name = name` or `name = number`, binding no protected name: a pass
    with no such statement propagates nothing (folding makes a number only
    where a propagation put one in)."""
    return scopes.is_simple_assign(stmt) and stmt.targets[0].id not in protected and \
        (isinstance(stmt.value, gast.Name) or astutil.is_number(stmt.value))


def _stores_and_early_reads(read: list, signature: list) -> tuple[dict, set[str]]:
    """(name -> how many times it is stored, in `read` - the `Name` nodes of
    each top-level statement, in order - and in `signature`'s; the names
    stored somewhere that are read before the function binds them: bound
    by the caller, as the seed of a pair's backward half is, so a later
    assignment rebinds them).  One loop over the names for both."""
    stores: dict = {}
    bound, early = set(), set()
    load, store = gast.Load, gast.Store
    for names in read:
        stored = []
        for node in names:
            kind = type(node.ctx)
            if kind is load:
                if node.id not in bound:
                    early.add(node.id)
            elif kind is store:
                stored.append(node.id)
                stores[node.id] = stores.get(node.id, 0) + 1
        bound.update(stored)
    for node in signature:
        if type(node.ctx) is store:
            stores[node.id] = stores.get(node.id, 0) + 1
    return stores, early & stores.keys()


def _replace_loads(stmt, values: dict, names: list | None = None) -> bool:
    """Each read of a name in `values` replaced, in the statement `stmt`, by
    a copy of its value: a name renamed in place, a number put in the
    name's place (`names`: the statement's `Name` nodes, if known).  Says
    whether a number was put in."""
    numbers: dict = {}
    for node in traversal.names(stmt) if names is None else names:
        value = values.get(node.id)
        if value is not None and type(node.ctx) is gast.Load:
            if type(value) is gast.Name:
                node.id = value.id
            else:
                numbers[node] = value
    if numbers:
        traversal.rewrite_children(
            stmt, lambda node: astutil.clone(numbers[node]) if node in numbers else node)
    return bool(numbers)
