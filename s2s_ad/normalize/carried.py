"""What a loop's next iteration reads of what this one bound: the checks
that keep the single pass of the alias analysis (compound.py) true
around a loop.

Functions over the normalizer's state `nz` (__init__.py) and the relations of
normalize/aliasing.py, called as a loop is entered and left:
- on entry, a list or dict built here may already hold what the body
  stores into it later (`carried_stores`);
- at the end of the body, an in-place update of a name the body rebinds
  later to a view or alias is refused (`check_carried`), as is an update
  of a value whose views the body keeps in a list (`check_kept_views`);
- names the body copies into one another (`a, b = b, a`) get run-time
  checks before their updates (`refuse_carried_updates`).
"""
from __future__ import annotations

import types

import gast

from .. import astutil, effects, frontend, scopes, traversal
from ..errors import UnsupportedSyntaxError
from ..rules import registry
from . import aliasing, mutators, refusals, sequences, views
from .alias_parts import Part


def carried_stores(nz, loop) -> None:
    """The next iteration of `loop` may read from a list or dict built
    here what its body stores there later (`t = xs[0]; t *= 2; xs[0] = a`:
    in the second round `t` is `a`, which the update changes): on entry,
    each name the body stores at a literal slot, and does not rebind, is
    already that slot's item (the re-reads and write-backs check at run
    time that it is); a name stored at another slot, or rebound, or what a
    stored value may view or be an item of, may share memory with an item
    (uncertain: an update that would need it is refused where they do
    share memory)."""
    rebound, read = rebound_names(loop), _items_read(loop)
    for stmt, viewing in _body_views(nz, loop):
        for base, index, value in _stores(stmt):
            if base not in nz.sequences or base in rebound or \
                    not read & set(aliasing.related(nz, base, upward=False)):
                continue            # (a comprehension's result: only stored into)
            literal = index if isinstance(index, gast.Constant) else astutil.const(...)
            name = value.id if isinstance(value, gast.Name) else None
            if name is not None and aliasing.is_local(nz, name) and name not in rebound:
                # (`...`: a slot known at run time only, an `append`'s)
                sequences.note_stored(nz, base, literal, value,
                                      literal is index and index.value is not ...)
            shared = viewing.get(name, set()) if name in viewing else \
                _viewed_names(nz, value) - ({name} - rebound)
            shared |= {held for seq in shared & nz.sequences     # (what it read them from)
                       for held, _ in aliasing.views_of(
                           nz, {seq} | nz.joined.get(seq, set()), items=True)}
            for other in sorted(n for n in shared if n != base and aliasing.is_local(nz, n)):
                item = astutil.subscript(astutil.name(base), astutil.const(...))
                nz.parts.add(other, Part(base, "index", item, certain=False, item=True))


_INSERTS = ("append", "insert")     # methods that store an item at a run-time slot


def _items_read(loop) -> set:
    """The names `loop` reads other than to store an item into them (`xs[i]
    = v`, `xs.append(v)`)."""
    storing = {n.value for n in traversal.walk(loop) if isinstance(n, gast.Subscript)
               and isinstance(n.ctx, gast.Store)}
    storing |= {n.func.value for n in traversal.walk(loop) if isinstance(n, gast.Call)
                and isinstance(n.func, gast.Attribute) and n.func.attr in _INSERTS}
    return {n.id for n in traversal.walk(loop) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load) and n not in storing}


def _stores(stmt) -> list:
    """(container, index, value) for each item `stmt` stores into a
    name's container: `xs[i] = v` (also in a tuple of targets), and
    `xs.append(v)` or `xs.insert(i, v)` (at a slot known at run time)."""
    out = []
    if isinstance(stmt, gast.Assign):
        for target in stmt.targets:
            pairs = zip(target.elts, stmt.value.elts) if isinstance(target, (
                gast.Tuple, gast.List)) and isinstance(stmt.value, (gast.Tuple, gast.List)) \
                and len(target.elts) == len(stmt.value.elts) else [(target, stmt.value)]
            out += [(t.value.id, t.slice, v) for t, v in pairs
                    if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)]
    simple = not hasattr(stmt, "body")     # (a block's statements come on their own)
    calls = [n for n in traversal.walk(stmt) if simple and isinstance(n, gast.Call)
             and isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name)
             and n.func.attr in _INSERTS and n.args]
    return out + [(c.func.value.id, astutil.const(...), c.args[-1]) for c in calls]


def check_carried(nz, loop, rebound: set) -> None:
    """Refuse an in-place update, in a loop body, of a name the body
    rebinds later to a view or alias of another value (`prev *= 2;
    prev = row`), or of a view of one bound in the body (`cur = prev[:2];
    cur *= 2; prev = row`): from the second iteration on the update writes
    what the previous one bound, which the single pass of this analysis
    does not follow.  Called after the body, before its relations are
    joined."""
    carried = carried_names(loop)
    for stmt, viewing in _body_views(nz, loop):
        for name in sorted(_updated(nz, stmt)):
            for held in sorted(({name} | viewing.get(name, set())) & carried):
                others = set(nz.aliases.get(held, ())) | nz.maybe_aliases.get(held, set())
                if nz.parts.get(held) or others - rebound - {held}:   # (names the loop
                    # rebinds too are copied into one another: see `compound._carry_around`)
                    raise _carried_update(nz, stmt, name, held)


def check_kept_views(nz, loop) -> None:
    """Refuse a loop whose body appends a view of a value (`hist.append(
    a[1:])`) that it updates in place (`a *= 2`): from the second
    iteration on the update changes the views kept before, which the
    single pass of this analysis relates to `a` through names the body
    has rebound since."""
    kept: set = set()       # the names an appended value may view
    for stmt, viewing in _body_views(nz, loop):
        for call in (n for n in traversal.walk(stmt) if isinstance(n, gast.Call)):
            if isinstance(call.func, gast.Attribute) and call.func.attr == "append" \
                    and call.args:
                arg = call.args[0]      # (appending `a` itself keeps no view of it)
                kept |= viewing.get(arg.id, set()) if isinstance(arg, gast.Name) \
                    else _viewed_names(nz, arg)
    for stmt in scopes.statements(loop.body):       # (before or after the append)
        for name in sorted(_updated(nz, stmt) & kept):
            raise UnsupportedSyntaxError(
                f"`{name}` is updated in place in this loop, which also keeps views of "
                "it in a list: from the second iteration on the update changes the "
                "views kept before, which s2s_ad does not follow around a loop",
                nz.src.locate(stmt), hint=f"append a copy (`.copy()`) of the view of `{name}`")


def _body_views(nz, loop):
    """Each statement of `loop`'s body, in order, with what the names bound
    in the body before it may view: name -> locals (transitively, `v =
    a[1:]; w = v[:1]`; a name rebound to a new value views nothing)."""
    viewing: dict = {}
    for stmt in scopes.statements(loop.body):
        yield stmt, viewing
        if isinstance(stmt, gast.Assign):
            bases = _viewed_names(nz, stmt.value)
            for target in scopes.stored_names(stmt):
                viewing[target] = bases.union(*(viewing.get(b, set()) for b in bases))


def _viewed_names(nz, value) -> set:
    """The locals whose memory `value` may share (none for a new value)."""
    if not _may_be_view(nz, value):
        return set()
    return {n for n in scopes.load_names(value) if aliasing.is_local(nz, n)}


def _may_be_view(nz, value) -> bool:
    """Whether `value` may share memory with a name it reads (a name, a
    subscript, an attribute, a call not known to make a new value)."""
    return isinstance(value, gast.Name) or views.view_of(nz, value) is not None or \
        bool(views.may_view(nz, value))


def _carried_update(nz, stmt, name: str, held: str) -> UnsupportedSyntaxError:
    what = f"`{name}` is updated in place in this loop and" if name == held else \
        f"`{name}`, which may be a view of `{held}`, is updated in place in this " \
        f"loop, and `{held}` is"
    return UnsupportedSyntaxError(
        f"{what} rebound later in it to a view or alias of another value, so from "
        "the second iteration on the update writes that value; s2s_ad does not "
        "follow a relation around a loop",
        nz.src.locate(stmt),
        hint=f"copy where `{held}` is rebound (`{held} = ....copy()`), or update the "
             "value it is bound to directly")


def carried_names(loop) -> set:
    """Names the body of `loop` may read before it rebinds them: each
    iteration's value of such a name is the previous iteration's.  Paths
    through ifs are followed; a name is bound after an `if` only if both
    branches bind it, and never by a nested loop (it may not run)."""
    bound = set()
    if isinstance(loop, gast.For):
        bound |= {n.id for n in traversal.walk(loop.target) if isinstance(n, gast.Name)}
    carried: set = set()
    _reads_before_binding(loop.body, bound, carried)
    return carried & rebound_names(loop)


def _reads_before_binding(body: list, bound: set, carried: set) -> set:
    """Add to `carried` the names `body` reads while not in `bound`; return
    the names bound after it on every path."""
    bound = set(bound)
    for stmt in body:
        if isinstance(stmt, gast.If):
            carried |= set(scopes.load_names(stmt.test)) - bound
            bound |= _reads_before_binding(stmt.body, bound, carried) & \
                _reads_before_binding(stmt.orelse, bound, carried)
        elif isinstance(stmt, (gast.For, gast.While)):
            header = stmt.iter if isinstance(stmt, gast.For) else stmt.test
            carried |= set(scopes.load_names(header)) - bound
            inner = bound | (scopes.all_names(stmt.target) if isinstance(stmt, gast.For) else set())
            _reads_before_binding(stmt.body + stmt.orelse, inner, carried)
        else:
            carried |= (set(scopes.load_names(stmt)) | _augmented(stmt)) - bound
            bound |= rebound_names(stmt)
    return bound


def _augmented(stmt) -> set:
    """Names `stmt` updates with `op=` (`x += v`, `x[i] += v`)."""
    return {n.id for node in traversal.walk(stmt) if isinstance(node, gast.AugAssign)
            for n in traversal.walk(node.target) if isinstance(n, gast.Name)}


def _updated(nz, stmt) -> set:
    """Names `stmt` updates in place (effects.updated_roots: `op=`, a
    subscript store, a mutating method, `out=`, a NumPy mutator), or
    through a helper of the user's that updates its argument (fuzz seed
    511384: `np.copyto(trips[1:], ...)` in a loop rebinding `trips` went
    unchecked, a wrong gradient)."""
    out = effects.updated_roots([stmt])
    for call in (n for n in traversal.walk(stmt) if isinstance(n, gast.Call)):
        callee = nz.src.resolve(call.func, nz.locals)
        if isinstance(callee, types.FunctionType) and registry.lookup(callee) is None \
                and not frontend.is_library(callee):
            out |= _helper_writes(call, callee)
    out.discard(None)
    return out


def _helper_writes(call: gast.Call, callee) -> set:
    """The roots of the arguments a helper of the user's updates in place."""
    written = frozenset().union(*effects.mutated_parameters(callee))
    bound = effects.bind_call(callee, call) if written else None
    if bound is None:       # (a `*t` or `**kw`: any argument may be one it updates)
        return {mutators.root_name(node) for node in traversal.walk(call)
                if isinstance(node, gast.Name)} if written else set()
    return {mutators.root_name(arg) for param, arg in bound.arguments.items()
            if param in written and isinstance(arg, gast.AST)}


def rebound_names(stmt) -> set:
    """Names a statement binds to new objects (an augmented assignment keeps
    an array: it is an in-place update, tracked where it happens)."""
    names = set()
    for node in traversal.walk(stmt):
        if isinstance(node, gast.Assign):
            targets = node.targets
        elif isinstance(node, (gast.AnnAssign, gast.For, gast.NamedExpr)):
            targets = [node.target]
        else:
            continue
        names |= {n.id for t in targets for n in traversal.walk(t)
                  if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return names


def refuse_carried_updates(nz, loop, members: set, outside: list, carried: set) -> None:
    """Before each in-place update in `loop` of one of `members` - names
    the body copies into one another, so that from the second iteration
    on each may hold what another held in the one before - check at run
    time that it shares no memory with `outside`, the objects they were
    related to by the end of the body: the single pass of this analysis
    saw the update before those relations.  Not where the name holds a
    value of this iteration made from no member: it is not `carried` (the
    body binds it before any read), and no binding of it before the update
    reads a member (`for p in params: p -= g`, whose write-back copies `p`
    into a member afterwards)."""
    order = list(scopes.statements(loop.body))
    updates = [s for s in order if s in nz.shares and s.targets[0].id in members]
    for update in updates:
        name = update.targets[0].id
        if name not in carried and not any(
                isinstance(s, gast.Assign) and name in scopes.stored_names(s) and
                set(scopes.load_names(s.value)) & members
                for s in order[:order.index(update)]):
            continue
        what = f"`{name}`" if name in nz.locals else "a value"
        saved, nz.user_stmt = nz.user_stmt, nz.origin.get(update, update)
        checks = nz.capture(lambda: [refusals.refusal(nz,
            name, base, f"{what} is updated in place in this loop and may share memory "
            f"with {f'`{base}`' if base in nz.locals else 'a value read before'}, which "
            f"s2s_ad does not follow around a loop: {what} may be read from it, or hold, "
            "from the second iteration on, what another name held in the one before, "
            "as names copied into one another (`a, b = b, a`) do",
            f"copy where {what} is bound in the loop (`.copy()`)") for base in outside])
        nz.user_stmt = saved
        insert_before(loop, update, checks)


def insert_before(node, stmt, new: list) -> None:
    """Insert `new` before `stmt`, in whichever block under `node` holds it."""
    for field in ("body", "orelse"):
        block = getattr(node, field, None) or []
        if stmt in block:
            at = block.index(stmt)
            block[at:at] = new
            return
        for child in block:
            insert_before(child, stmt, new)
