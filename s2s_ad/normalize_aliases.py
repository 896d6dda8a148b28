"""The alias analysis: which names may share memory.

A mixin of the normalizer (see normalize.py).  Two relations are tracked in
program order while the function is normalized:

- *aliases*: names bound to one object by plain copies (`y = x`);
- *parts*: `v` is a part of `b` when it was bound to a view of `b` (any
  subscript `b[i]`, `b.T`, `b.reshape(...)`, `b.ravel()`, `np.asarray(b)`,
  the rows a `for` loop reads) or is an item of a display `b = [v, w]`.

A relation bound inside an `if` or a loop is *uncertain* after it (the
index it was bound with is not known), and so is one whose index variable
was rebound; names that only may be one object are *maybe-aliases*.  What
an in-place update emits from these relations is normalize_updates.py.
`Normalized.heirs` maps each rebinding to the names that still share memory
with the object it unbinds (recorded by reference, that old value changes
with them), and `Normalized.passes` each call of a helper to what its
arguments may share memory with.
"""
from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass

import gast
import numpy

from . import astutil, runtime, scopes
from .errors import UnsupportedSyntaxError
from .rules import registry, stop_gradient_like
from .ir import OPERATORS, RUNTIME

_VIEW_METHODS = {"reshape": "reshape", "ravel": "reshape", "view": "reshape"}
_VIEW_FUNCTIONS = {numpy.reshape: "reshape", numpy.ravel: "reshape",
                   numpy.asarray: "reshape", numpy.transpose: "T",
                   runtime.indexable: "reshape"}


@dataclass
class Part:
    """A name bound to `view`, a view or an item of `base` (see above)."""
    base: str
    kind: str                   # "index", "T" or "reshape": how a write reaches base
    view: gast.expr             # the expression that reads it from `base`
    certain: bool = True
    reread: bool = True         # re-read it when `base` changes (not a temporary)
    item: bool = False          # an item a display or `append` put there
    masked: bool = False        # bound by `stop_gradient(view)`: no gradient to `base`

    @property
    def index(self):
        return astutil.index_value(self.view.slice) if self.kind == "index" else None

    def rebase(self, base: str) -> None:
        for node in astutil.walk(self.view):
            if isinstance(node, gast.Name) and node.id == self.base:
                node.id = base
        self.base = base


class AliasForms:
    """Relies on the normalizer's `emit`, `capture`, `namer`, `src`,
    `locals`, `_stmt`, `loops` and `origin`; owns `aliases`, `loose`,
    `maybe_aliases`, `parts`, `tuples`, `rereads`, `shares`, `heirs`,
    `masked`, `unmasked` and `passes`."""

    # -- binding -------------------------------------------------------------
    def _bind(self, stmt: gast.Assign) -> None:
        """Update the relations for an emitted `target = value`."""
        target, value = stmt.targets[0].id, self._same_object(stmt.value)
        if stmt in self.rereads or isinstance(value, gast.Name) and value.id == target:
            return                      # (`x = x` keeps the object and its relations)
        if _updates_in_place(value, target):
            self._index_changed(target)     # `j += 1` rebinds an int
            if astutil.dotted_name(value.func.value) == OPERATORS:
                self.loose.add(target)  # ...and `r *= c` a float: still one object?
            self._shares_items(target, value)
            return                      # the object, and its relations, stay
        self._rebind(target, stmt)
        self._shares_items(target, value)
        self._note_mask(target, stmt.value)
        self.loose.discard(target)
        for holder in [h for h, items in self.tuples.items() if target in items or h == target]:
            del self.tuples[holder]         # an item rebound: the display no longer holds it
        if isinstance(value, gast.Tuple) and all(isinstance(e, gast.Name) for e in value.elts):
            self.tuples[target] = [e.id for e in value.elts]
        if isinstance(value, gast.Name) and value.id != target and self._is_local(value.id):
            group = self.aliases.setdefault(value.id, {value.id})
            group.add(target)
            self.aliases[target] = group
            if value.id in self.loose:      # one with `value`, loosely with the rest
                self.loose.add(target)
            for part in self.parts.get(value.id, []):   # the same view of the same base
                self.parts.setdefault(target, []).append(dataclasses.replace(
                    part, view=astutil.clone(part.view), reread=target in self.locals))
        item = self._tuple_item(value)
        if item is not None and item != target:     # `t = pair[0]` is that item
            group = self.aliases.setdefault(item, {item})
            group.add(target)
            self.aliases[target] = group
        view = self._view_of(value)
        if view is not None and view.base != target and self._is_local(view.base):
            # a temporary read by subscript is used once, before any update
            view.reread = target in self.locals or not isinstance(value, gast.Subscript)
            view.masked = value is not stmt.value
            self.parts.setdefault(target, []).append(view)
        for arg in self._helper_arguments(value):   # a helper may return a view of it
            self.parts.setdefault(target, []).append(
                Part(arg, "index", astutil.clone(value), certain=False))
        for key, elt in _items(value):
            if isinstance(elt, gast.Name) and elt.id != target and self._is_local(elt.id):
                item = astutil.subscript(astutil.name(target), key)
                self.parts.setdefault(elt.id, []).append(Part(target, "index", item, item=True))

    def _shares_items(self, target: str, value) -> None:
        """Track the names that may hold a list or tuple the function built
        (`sequences`); `z = a + b`, `a * n` (or `+=`, `*=`) on one joins or
        repeats it: `z`'s items are its operands' (a repeated one's, each
        other's), which no relation follows; `joined` keeps the operands,
        for the check an in-place update of an item makes (normalize_inplace)."""
        operands = _join_operands(value)
        built = isinstance(value, (gast.List, gast.Tuple)) or isinstance(value, gast.Call) and \
            any(self.src.resolve(value.func, self.locals) is f for f in (list, tuple, sorted))
        in_place = _updates_in_place(value, target)
        if operands and any(o in self.sequences for o in operands):
            self.sequences.add(target)
            kept = self.joined.get(target, set()) if in_place else set()
            self.joined[target] = kept | {o for o in operands if o != target and self._is_local(o)}
        elif built:
            self.sequences.add(target)
            self.joined.pop(target, None)
        elif not in_place:
            self.sequences.discard(target)
            self.joined.pop(target, None)

    def _same_object(self, value):
        """`value`, or for `stop_gradient(e)` the `e` it returns itself (the
        same object: updates through either reach both)."""
        return value.args[0] if self._is_stop_gradient(value) else value

    def _is_stop_gradient(self, value) -> bool:
        return isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords \
            and stop_gradient_like(self.src.resolve(value.func, self.locals))

    # -- masking: which names hold a value `stop_gradient` returned ----------
    def _note_mask(self, target: str, value) -> None:
        """Record whether `target = value` binds a masked value (returned by
        `stop_gradient`, or a copy of one).  The sets only grow, and the
        user's bindings were all noted up front (`_note_masks`), so a name
        bound both ways anywhere is mixed at every point of the function."""
        mask = True if self._is_stop_gradient(value) else \
            self._mask(value.id) if isinstance(value, gast.Name) else False
        if mask is not False:
            self.masked.add(target)
        if mask is not True:
            self.unmasked.add(target)

    def _note_masks(self) -> None:
        """Note every binding of the user's function (and its parameters)."""
        by_stop = {s.targets[0] for s in scopes.assignments(self.src.tree.body)
                   if isinstance(s.targets[0], gast.Name) and self._is_stop_gradient(s.value)}
        for node in astutil.walk(self.src.tree):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                (self.masked if node in by_stop else self.unmasked).add(node.id)
        self.unmasked |= self.params

    def _mask(self, name: str) -> bool | None:
        """Whether `name` holds a masked value: True, False, or None where
        it may be either."""
        masked, unmasked = name in self.masked, name in self.unmasked
        return None if masked and unmasked else masked

    def _tuple_item(self, value) -> str | None:
        """For `tup[i]`, with `tup` bound to a tuple display, the name at i."""
        if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)
                and isinstance(value.slice, gast.Constant)):
            return None
        items = self.tuples.get(value.value.id)
        index = value.slice.value
        if items is None or not isinstance(index, int) or not -len(items) <= index < len(items):
            return None
        return items[index]

    def _helper_arguments(self, value) -> list:
        """The local names passed to a function of the user's (or a nested
        one) called by `value`: its result may be one of them, or a view."""
        if not isinstance(value, gast.Call):
            return []
        func = value.func
        callee = self.src.resolve(func, self.locals)
        nested = isinstance(func, gast.Name) and func.id in self.nested
        if not nested and not (isinstance(callee, types.FunctionType) and
                               registry.lookup(callee) is None and
                               not registry.is_nondifferentiable(callee)):
            return []
        args = [*value.args, *(k.value for k in value.keywords)]
        return sorted({a.id for a in args if isinstance(a, gast.Name) and self._is_local(a.id)})

    def _passed(self, stmt) -> None:
        """For a call of a helper (which may update an argument in place):
        the names each local argument may share memory with."""
        args = self._helper_arguments(stmt.value)
        if args:
            self.passes[stmt] = {a: frozenset(self._related(a)) for a in args}

    def _related(self, name: str, upward: bool = True) -> set:
        """`name`, its aliases and the views of them, transitively; `upward`:
        also maybe-aliases and the bases of parts - every name that may
        share memory with `name`."""
        out, todo = set(), [name]
        while todo:
            n = todo.pop()
            if n in out:
                continue
            out.add(n)
            todo.extend(self.aliases.get(n, ()))
            todo.extend(view for view, _ in self._views_of({n}))
            if upward:
                todo.extend(self.maybe_aliases.get(n, ()))
                todo.extend(p.base for p in self.parts.get(n, []))
        return out

    def _is_local(self, name: str) -> bool:
        """A name the function binds, or a temporary (a name of s2s_ad's;
        not a lifted function's, which is bound at compile time)."""
        if self.user_names is None:
            self.user_names = scopes.all_names(self.src.tree)
        return name in self.locals or name not in self.user_names and \
            name not in self.src.lifted

    def _rebind(self, name: str, stmt) -> None:
        """`name` now holds a new object (bound by `stmt`): its relations end.
        The names still sharing memory with the old object are its heirs: an
        update through them changes the old value that `stmt` may record."""
        maybe = self.maybe_aliases.pop(name, set())
        for other in maybe:
            self.maybe_aliases.get(other, set()).discard(name)
        group = self.aliases.pop(name, None)
        if group is not None:
            group.discard(name)
        heirs = maybe | set(group or ()) | {p.base for p in self.parts.pop(name, [])} | \
            {view for view, _ in self._views_of({name})}
        if heirs:
            self.heirs[stmt] = frozenset(heirs)
        heir = min(group) if group else None
        for view, part in self._views_of({name}):
            if heir is not None:
                part.rebase(heir)       # the old object lives on as `heir`
            else:
                part.certain = False
        self._index_changed(name)

    def _index_changed(self, name: str) -> None:
        """Views read with `name` (`B[:, name]`) are no longer known."""
        for parts in self.parts.values():
            for part in parts:
                if part.base != name and name in scopes.load_names(part.view):
                    part.certain = False

    def _view_of(self, value) -> Part | None:
        """The relation a value read from a local has to it, if it may share
        memory with it."""
        view = astutil.clone(value)
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            return Part(value.value.id, "index", view)
        if isinstance(value, gast.Attribute) and value.attr == "T" and \
                isinstance(value.value, gast.Name):
            return Part(value.value.id, "T", view)
        if not isinstance(value, gast.Call):
            return None
        func = value.func
        if isinstance(func, gast.Attribute) and func.attr in _VIEW_METHODS and \
                isinstance(func.value, gast.Name) and func.value.id in self.locals:
            return Part(func.value.id, _VIEW_METHODS[func.attr], view)
        callee = self.src.resolve(func, self.locals)
        kind = _VIEW_FUNCTIONS.get(callee) if _hashable(callee) else None
        if kind and value.args and isinstance(value.args[0], gast.Name) and \
                (kind != "T" or len(value.args) == 1 and not value.keywords):
            return Part(value.args[0].id, kind, view)
        return None

    def _view_base(self, expr) -> gast.Name:
        """An atom for the base of `x.T[0] = v` or `x[1][2] = v`: a view of
        `x` the update writes through."""
        base = self.atom(expr)
        view = self._view_of(expr)
        if view is not None:
            self.parts.setdefault(base.id, []).append(view)
        return base

    def _views_of(self, names: set):
        return [(view, part) for view, parts in sorted(self.parts.items())
                for part in parts if part.base in names]

    def _relations(self) -> tuple:
        """A copy of the alias and part relations (for the other branch)."""
        groups, aliases = {}, {}
        for name, group in self.aliases.items():
            aliases[name] = groups.setdefault(id(group), set(group))
        maybe = {name: set(others) for name, others in self.maybe_aliases.items()}
        parts = {name: [dataclasses.replace(p, view=astutil.clone(p.view)) for p in ps]
                 for name, ps in self.parts.items()}
        return aliases, maybe, parts

    def _branches(self, body_fn, orelse_fn):
        """Normalize both branches of an `if` from the relations before it,
        and join them: what either branch relates holds after, uncertainly."""
        before = self._relations()
        body = body_fn()
        after_body = self._relations()
        self.aliases, self.maybe_aliases, self.parts = before
        orelse = orelse_fn()
        aliases, maybe, parts = after_body
        for name, others in maybe.items():
            self.maybe_aliases.setdefault(name, set()).update(others)
        for name, group in aliases.items():
            if self.aliases.get(name) != group:
                for other in group - {name}:
                    self.maybe_aliases.setdefault(name, set()).add(other)
                    self.maybe_aliases.setdefault(other, set()).add(name)
        for name, ps in parts.items():
            known = self.parts.setdefault(name, [])
            known.extend(p for p in ps if p not in known)
        return body, orelse

    def _enter_compound(self, stmt) -> dict:
        """At the start of a compound statement: the relations of the names
        it rebinds become uncertain (a loop's next iteration); returns them,
        for `_leave_compound`."""
        self._leave_compound(stmt)
        return {name: list(self.parts.get(name, [])) for name in _rebound_names(stmt)}

    def _check_carried(self, loop) -> None:
        """Refuse an in-place update, in a loop body, of a name the body
        rebinds later to a view or alias of another value (`prev *= 2;
        prev = row`): from the second iteration on the update writes what
        the previous one bound, which the single pass of this analysis does
        not follow.  Called after the body, before its relations are joined."""
        carried = _carried_names(loop)
        for stmt in scopes.statements(loop.body):
            updated = _augmented(stmt) | _written_through(stmt)
            for name in sorted(updated & carried):
                if self.parts.get(name) or len(self.aliases.get(name, ())) > 1:
                    raise UnsupportedSyntaxError(
                        f"`{name}` is updated in place in this loop and rebound later in "
                        "it to a view or alias of another value, so from the second "
                        "iteration on the update writes that value; s2s_ad does not "
                        "follow a relation around a loop", self.src.locate(stmt),
                        hint=f"copy where `{name}` is rebound (`{name} = ....copy()`), "
                             "or update the value it is bound to directly")

    def _leave_compound(self, stmt, before: dict | None = None, emitted=None) -> None:
        """Relations of names a compound statement rebinds (in the user's
        code, or in `emitted`, its A-normal form) are uncertain after it;
        `before` (from `_enter_compound`) holds those they had on entry,
        which hold on the paths that did not rebind them."""
        rebound = _rebound_names(stmt) | (scopes.stored_names(emitted) if emitted else set())
        for name, parts in (before or {}).items():
            known = self.parts.setdefault(name, [])
            known.extend(p for p in parts if p not in known)
        for name in rebound:
            group = self.aliases.pop(name, None)
            if group is not None:
                group.discard(name)
                for other in group:
                    self.maybe_aliases.setdefault(name, set()).add(other)
                    self.maybe_aliases.setdefault(other, set()).add(name)
            for part in self.parts.get(name, []):
                part.certain = False
        for _, part in self._views_of(rebound):
            part.certain = False
        if emitted is not None and isinstance(stmt, (gast.For, gast.While)):
            self._check_carried(stmt)
            self._carry_around(emitted, rebound)

    def _carry_around(self, loop, rebound: set) -> None:
        """A loop's next iteration reads what this one bound: names the body
        copies into one another (`a, b = b, a`) may each hold, after the
        loop, what any of them held in some iteration.  They become
        maybe-aliases of each other and share their (uncertain) parts."""
        group = {name: {name} for name in rebound}
        carried = _carried_names(loop)
        for stmt in scopes.assignments(loop.body):
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, gast.Name) and isinstance(value, gast.Name) \
                    and {target.id, value.id} <= rebound and group[target.id] is not group[value.id]:
                merged = group[target.id] | group[value.id]
                for name in merged:
                    group[name] = merged
        for members in {id(g): g for g in group.values() if len(g) > 1}.values():
            shared = [p for name in members for p in self.parts.get(name, [])]
            outside = {p.base for p in shared} | {
                a for name in members for a in self.aliases.get(name, ())} - members
            if members & carried:       # a value held around the loop
                self._refuse_carried_updates(loop, members, sorted(outside))
            for name in members:
                known = self.parts.setdefault(name, [])
                known.extend(p for p in shared if p not in known)
                self.maybe_aliases.setdefault(name, set()).update(members - {name})
            for part in shared:
                part.certain = False


def _items(value) -> list:
    """(key, item) of a tuple, list or dict display (dict keys: literals)."""
    if isinstance(value, (gast.Tuple, gast.List)):
        return [(astutil.const(i), e) for i, e in enumerate(value.elts)]
    if isinstance(value, gast.Dict):
        return [(astutil.clone(k), v) for k, v in zip(value.keys, value.values)
                if isinstance(k, gast.Constant)]
    return []


def _carried_names(loop) -> set:
    """Names the body of `loop` may read before it rebinds them: each
    iteration's value of such a name is the previous iteration's.  Paths
    through ifs are followed; a name is bound after an `if` only if both
    branches bind it, and never by a nested loop (it may not run)."""
    bound = set()
    if isinstance(loop, gast.For):
        bound |= {n.id for n in astutil.walk(loop.target) if isinstance(n, gast.Name)}
    carried: set = set()
    _reads_before_binding(loop.body, bound, carried)
    return carried & _rebound_names(loop)


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
            bound |= _rebound_names(stmt)
    return bound


def _augmented(stmt) -> set:
    """Names `stmt` updates with `op=` (`x += v`, `x[i] += v`)."""
    return {n.id for node in astutil.walk(stmt) if isinstance(node, gast.AugAssign)
            for n in astutil.walk(node.target) if isinstance(n, gast.Name)}


def _written_through(stmt) -> set:
    """Names `stmt` writes into by subscript (`x[i] = v`)."""
    return {node.value.id for node in astutil.walk(stmt)
            if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store)
            and isinstance(node.value, gast.Name)}


def _rebound_names(stmt) -> set:
    """Names a statement binds to new objects (an augmented assignment keeps
    an array: it is an in-place update, tracked where it happens)."""
    names = set()
    for node in astutil.walk(stmt):
        if isinstance(node, gast.Assign):
            targets = node.targets
        elif isinstance(node, (gast.AnnAssign, gast.For, gast.NamedExpr)):
            targets = [node.target]
        else:
            continue
        names |= {n.id for t in targets for n in astutil.walk(t)
                  if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return names


def _join_operands(value) -> list:
    """The names `a + b`, `a * b`, `a += b` or `a *= b` reads (empty for
    anything else)."""
    if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Mult)):
        args = [value.left, value.right]
    elif isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
            astutil.dotted_name(value.func.value) == OPERATORS and \
            value.func.attr in ("iadd", "imul"):
        args = value.args
    else:
        return []
    return [a.id for a in args if isinstance(a, gast.Name)]


def _updates_in_place(value, target: str) -> bool:
    """`x = setitem(x, ...)` or `x = iadd(x, ...)`: the object stays."""
    return (isinstance(value, gast.Call) and value.args
            and isinstance(value.args[0], gast.Name) and value.args[0].id == target
            and isinstance(value.func, gast.Attribute)
            and astutil.dotted_name(value.func.value) in (RUNTIME, OPERATORS))


def _hashable(obj) -> bool:
    try:
        hash(obj)
        return True
    except TypeError:
        return False
