"""Updates through views (the `views` feature): a slice, a row loop, a
column, `.T`, a row name, what a NumPy call returned, a list of views
changed at a run-time slot, chains of views, a loop storing into the
container it reads, NumPy calls writing into their argument, a write from
an overlapping view of the target, an update inside an `if` or a loop, a
name kept for an item whose slot is replaced, a name rebound to a view of
itself and updated.  Registered
with gen_stmts' `@statement`.
"""
from __future__ import annotations

from .gen_core import Gen, Scope, Var, strip
from .gen_exprs import cond, expr, index, positive
from .gen_stmts import mutable, statement


@statement("views", 2)
def view_update(g: Gen, sc: Scope):
    """Updates through views: a slice, a row loop, a column, `.T`, a row name."""
    vecs = [v for v in sc.targets("V") if mutable(g, v) and v.name.isidentifier()]
    mats = [v for v in sc.targets("M") if mutable(g, v) and v.name.isidentifier()]
    forms = [(f, vecs) for f in [_slice_view, _library_view, _library_write, _view_list,
                                 _view_chain, _loop_store, _self_write, _branch_update,
                                 _old_handle, _rebound_to_itself, _flat] if vecs]
    forms += [(f, mats) for f in [_row_loop, _column, _transposed, _row_name,
                                  _self_write, _branch_update, _flat] if mats]
    if not forms:
        return False
    form, found = g.pick(forms)
    form(g, sc, g.pick(found))


def _slice_view(g: Gen, sc: Scope, var: Var):
    w = g.fresh(sc)
    g.w.line(f"{w} = {var.name}{g.pick(['[1:]', '[:2]', '[::-1]'])}")
    g.w.line(g.pick([f"{w} += {strip(expr(g, sc, 'S'))}", f"{w} *= {strip(positive(g, sc, 'S', 1))}",
                     f"{w}[0] = {strip(expr(g, sc, 'S'))}"]))
    sc.add(Var(w, "X"))


def _view_list(g: Gen, sc: Scope, var: Var):
    """A list or dict of views of one vector - overlapping (sliding windows)
    or disjoint - changed in a loop at a slot known only at run time: an
    item written in place (through the argument's memory), or a slot
    replaced (which writes no array)."""
    if not sc.can("range"):
        return _slice_view(g, sc, var)
    xs, k, v = g.fresh(sc), g.fresh(sc), var.name
    views = g.pick([(f"{v}[0:2]", f"{v}[1:3]"), (f"{v}[:1]", f"{v}[1:]"),
                    (f"{v}[::2]", f"{v}[1:]"), (f"{v}[:2]", f"{v}[:2]")])
    keyed = g.chance(0.3)
    g.w.line(f"{xs} = {{'a': {views[0]}, 'b': {views[1]}}}" if keyed else
             f"{xs} = [{views[0]}, {views[1]}]")
    c, e = g.const(0.5, 1.5), strip(expr(g, sc, "S"))
    with g.w.block(f"for {k} in {xs}:" if keyed else f"for {k} in range(2):"):
        g.w.line(g.pick([f"{xs}[{k}][0] = {xs}[{k}][0] * {c} + {e}",
                         f"{xs}[{k}] = {xs}[{k}] - {c} * {xs}[{k}] ** 2",
                         f"{xs}[{k}] *= {c}"]))


def _view_chain(g: Gen, sc: Scope, var: Var):
    """Items of a list that view one vector along chains of different
    lengths (`m[1:]` of `m = v[:2]`, or of `ms[0]` of `ms = [v[:2]]`, and
    `v[1:]`), updated through a name at a slot known only at run time,
    while a loop over the vector reads it again each pass; `m` is read
    after (it must see both writes)."""
    if not sc.can("range"):
        return _slice_view(g, sc, var)
    m, xs, k, t, e, acc, out = (g.fresh(sc) for _ in range(7))
    v, view = var.name, g.pick(['[:2]', '[::-1]', '[1:]', '[:]'])
    if g.chance(0.3):               # the view held by a list, read back by its slot
        g.w.line(f"{m} = [{v}{view}]")
        m = f"{m}[0]"
    else:
        g.w.line(f"{m} = {v}{view}")
    g.w.line(f"{xs} = [{m}{g.pick(['[1:]', '[:1]', '[::2]'])}, "
             f"{v}{g.pick(['[1:]', '[:1]', '[::2]', '[-1:]'])}]")
    g.w.line(f"{acc} = 0.0")
    with g.w.block(f"for {e} in {v}:"):
        with g.w.block(f"for {k} in range(2):"):
            g.w.line(f"{t} = {xs}[{k}]")
            g.w.line(f"{t} *= {g.const(0.5, 1.5)}")
        g.w.line(f"{acc} = {acc} + {e} * {g.const(0.5, 1.5)}")
    g.w.line(f"{out} = {acc} + np.sum({m} * {g.const(0.5, 1.5)})")
    sc.add(Var(out, "S"))


def _loop_store(g: Gen, sc: Scope, var: Var):
    """A loop that reads an item of a list or dict, updates it in place,
    then stores another object there (the vector, a view of it, another
    slot's item, or swaps two slots), maybe through a second name for the
    container: from the second pass on the item read is what the pass
    before stored."""
    if not sc.can("range"):
        return _slice_view(g, sc, var)
    b, hs, k, t, out = (g.fresh(sc) for _ in range(5))
    v, keyed = var.name, g.chance(0.3)
    g.w.line(f"{b} = {v} * {g.const(0.5, 1.5)}")
    g.w.line(f"{hs} = {{'u': {b}, 'w': {v}}}" if keyed else f"{hs} = [{b}, {v}]")
    slot, other = ("'u'", "'w'") if keyed else g.pick([("0", "1"), ("-1", "0")])
    q = hs
    if g.chance(0.3):               # stored through a second name for the container
        q = g.fresh(sc)
        g.w.line(f"{q} = {hs}")
    store = g.pick([f"{q}[{slot}] = {v}", f"{q}[{slot}] = {hs}[{other}]",
                    f"{q}[{slot}] = {v}{g.pick(['[:]', '[::-1]', '[:]'])}",
                    f"{q}[{slot}], {q}[{other}] = {hs}[{other}], {hs}[{slot}]"]
                   + ([] if keyed else [f"{q}.append({v})"]))
    with g.w.block(f"for {k} in range({g.pick([2, 3])}):"):
        g.w.line(f"{t} = {hs}[{slot}]")
        g.w.line(g.pick([f"{t} *= {g.const(0.5, 1.5)}", f"{t}[0] = {t}[0] * {g.const(0.5, 1.5)}",
                         f"{t} += {strip(expr(g, sc, 'S'))}"]))
        if g.chance(0.3):
            with g.w.block(f"if {k} == 1:"):
                g.w.line(store)
        else:
            g.w.line(store)
    g.w.line(f"{out} = np.sum({b} * {g.const(0.5, 1.5)}) + np.sum({v} * {g.const(0.5, 1.5)})")
    sc.add(Var(out, "S"))


def _old_handle(g: Gen, sc: Scope, var: Var):
    """A name kept for an item of a list or dict of views (`old = xs[0]`),
    then the slot changed (replaced at a literal or run-time slot, popped,
    or updated by `+=`; maybe in an `if` or a loop), then the name updated
    in place or only read: replacing a slot moves no values, so an update
    of the name writes the vector through the item it still is."""
    xs, old, k, out = (g.fresh(sc) for _ in range(4))
    v, keyed = var.name, g.chance(0.3)
    first, second = g.pick([(f"{v}[:2]", f"{v}[1:]"), (f"{v}[::2]", f"{v}[-1:]"),
                            (f"{v}[:1]", f"{v}[1:] * {g.const(0.5, 1.5)}")])
    g.w.line(f"{xs} = {{'a': {first}, 'b': {second}}}" if keyed else f"{xs} = [{first}, {second}]")
    slot, other = ("'a'", "'b'") if keyed else ("0", "1")
    g.w.line(f"{old} = {xs}[{slot}]")
    changes = [f"{xs}[{slot}] = {v}[1:] * {g.const(0.5, 1.5)}", f"{xs}[{slot}] = {xs}[{other}]",
               f"{xs}[{slot}] += {g.const(0.5, 1.5)}"] + ([] if keyed else [f"{xs}.pop(0)"])
    change = g.pick(changes)
    where = g.pick(["", f"if {strip(cond(g, sc))}:"] +
                   ([f"for {k} in range(2):"] if sc.can("range") and "pop" not in change else []))
    if where:
        with g.w.block(where):
            g.w.line(change)
    else:
        g.w.line(change)
    update = g.pick([f"{old} *= {g.const(0.5, 1.5)}", f"{old}[0] = {strip(expr(g, sc, 'S'))}", ""])
    if update:
        g.w.line(update)
    last = f"{xs}['b']" if keyed else f"{xs}[-1]"
    g.w.line(f"{out} = np.sum({last} * {g.const(0.5, 1.5)}) + np.sum({old} * "
             f"{g.const(0.5, 1.5)}) + np.sum({v} * {g.const(0.5, 1.5)})")
    sc.add(Var(out, "S"))


def _rebound_to_itself(g: Gen, sc: Scope, var: Var):
    """A value read by a product (whose adjoint reads it), then its name
    rebound to itself or to a view of its own object (`w = w[:]`,
    `np.asarray(w)`, `w.reshape(-1)`), then updated in place: the update
    changes the value the rebinding unbound."""
    w, out = g.fresh(sc), g.fresh(sc)
    g.w.line(f"{w} = {var.name} * {g.const(0.5, 1.5)}")
    g.w.line(f"{out} = np.sum({w} * {var.name})")
    g.w.line(f"{w} = " + g.pick([w, f"{w}[:]", f"np.asarray({w})", f"{w}.reshape(-1)",
                                 f"{w}[::-1]"]))
    g.w.line(g.pick([f"{w} *= {g.const(0.5, 1.5)}", f"{w}[0] += {strip(expr(g, sc, 'S'))}"]))
    g.w.line(f"{out} = {out} + np.sum({w} * {g.const(0.5, 1.5)})")
    sc.add(Var(out, "S"))


def _library_view(g: Gen, sc: Scope, var: Var):
    """An update through what a NumPy function or method returned: the
    argument itself, a view of it, or a new array (s2s_ad must follow it,
    refuse it, or see that it is new)."""
    w = g.fresh(sc)
    call = g.pick(["np.asarray({})", "np.ravel({})", "{}.reshape(-1)", "np.ascontiguousarray({})",
                   "{}.astype(float, copy=False)", "np.split({}, 1)[0]", "np.atleast_1d({})",
                   "np.flip({})", "{}.conj()", "np.squeeze({})", "np.copy({})", "{}.copy()"])
    g.w.line(f"{w} = {call.format(var.name)}")
    g.w.line(g.pick([f"{w} += {strip(expr(g, sc, 'S'))}", f"{w} *= {strip(positive(g, sc, 'S', 1))}",
                     f"{w}[0] = {strip(expr(g, sc, 'S'))}"]))
    sc.add(Var(w, "X"))


def _library_write(g: Gen, sc: Scope, var: Var):
    """A NumPy call that writes into the array it is given, or a view of it."""
    v, e = var.name, strip(expr(g, sc, "S"))
    g.w.line(g.pick([f"np.copyto({v}[1:], {e})", f"np.copyto({v}, {e}, where={v} > 0.0)",
                     f"np.multiply({v}[1:], {e}, out={v}[1:])", f"np.add({v}, {e}, out={v})",
                     f"np.put_along_axis({v}, np.array([0, 0]), {e}, 0)",
                     f"np.multiply({v}[1:], {e}, {v}[1:])", f"np.tanh({v}, {v})",   # out by
                     f"np.cumsum({v} * {e}, 0, None, {v})",                         # position
                     f"np.floor({v} * {e}, out={v})", f"np.sign({v}[1:], {v}[1:])"]))  # no gradient


def _self_write(g: Gen, sc: Scope, var: Var):
    """An array written from an overlapping view of itself: a shift, a
    reversal, rows, columns or the transpose, which NumPy reads whole
    first, or a column into a row (`M[i] = M[:, j]`), whose order it does
    not promise (refused where the two overlap)."""
    v = var.name
    if var.kind == "V":
        g.w.line(g.pick([f"{v}[1:] = {v}[:-1]", f"{v}[:-1] = {v}[1:]", f"{v}[:] = {v}[::-1]",
                         f"{v}[::2] = {v}[::-2]", f"np.copyto({v}[1:], {v}[:-1])"]))
    else:
        g.w.line(g.pick([f"{v}[1:] = {v}[:-1]", f"{v}[:, :-1] = {v}[:, 1:]", f"{v}[...] = {v}.T",
                         f"{v}[:] = {v}[{g.index()}]", f"{v}[{g.index()}] = {v}[:, {g.index()}]"]))


def _branch_update(g: Gen, sc: Scope, var: Var):
    """A view (a slice, a row, a column) updated in place inside an `if`
    (maybe in an `else` too) or a loop, then again after it."""
    w, v = g.fresh(sc), var.name
    view = g.pick(["[1:]", "[::-1]", "[:2]"] if var.kind == "V" else
                  [f"[{g.index()}]", f"[:, {g.index()}]", "[1:]"])
    g.w.line(f"{w} = {v}{view}")
    looped = sc.can("range") and g.chance(0.4)
    with g.w.block(f"for {g.fresh(sc)} in range(2):" if looped else f"if {cond(g, sc)}:"):
        g.w.line(f"{w} *= {g.const(0.5, 1.5)}")
    if not looped and g.chance(0.3):
        with g.w.block("else:"):
            g.w.line(f"{w} -= {strip(expr(g, sc, 'S'))}")
    g.w.line(g.pick([f"{w} += {strip(expr(g, sc, 'S'))}", f"{w}[0] = {strip(expr(g, sc, 'S'))}",
                     f"{w} /= {strip(positive(g, sc, 'S', 1))}"]))
    sc.add(Var(w, "X"))


def _flat(g: Gen, sc: Scope, var: Var):
    """Flat positions (C order): a write through them (`M.flat[::n + 1] +=
    v`, the diagonal; repeated positions; one) or a read, a copy, kept
    across an update of the array."""
    n = g.n * g.n if var.kind == "M" else g.n
    where = g.pick([f"[::{g.n + 1}]" if var.kind == "M" else "[::2]", f"[{n - 1}]",
                    f"[[0, {n - 1}, 0]]", "[1:]"])
    if g.chance(0.3):
        w = g.fresh(sc)
        g.w.line(f"{w} = {var.name}.flat{where}")
        g.w.line(f"{var.name}.flat[0] *= {g.const(0.5, 1.5)}")
        g.w.line(f"{w} = np.sum({w} * {w})")
        sc.add(Var(w, "S"))
        return
    g.w.line(g.pick([f"{var.name}.flat{where} = {strip(expr(g, sc, 'S'))}",
                     f"{var.name}.flat{where} += {strip(expr(g, sc, 'S'))}",
                     f"{var.name}.flat{where} *= {g.const(0.5, 1.5)}"]))


def _row_loop(g: Gen, sc: Scope, var: Var):
    row = g.fresh(sc)
    update = g.pick([f"{row} /= np.sum(np.exp({row}))", f"{row} -= {row}.mean()",
                     f"{row} /= (1.0 + np.sum({row} ** 2))", f"{row} *= {g.const(0.5, 1.5)}"])
    with g.w.block(f"for {row} in {var.name}:"):
        g.w.line(update)
    sc.add(Var(row, "X"))


def _column(g: Gen, sc: Scope, var: Var):
    col = g.fresh(sc)
    g.w.line(f"{col} = {var.name}[:, {index(g, sc)}]")
    g.w.line(g.pick([f"{col} -= {col}.mean()", f"{col} *= {strip(positive(g, sc, 'S', 1))}"]))
    sc.add(Var(col, "V", alias=True))


def _transposed(g: Gen, sc: Scope, var: Var):
    g.w.line(f"{var.name}.T[{g.index()}] *= {g.const(0.5, 3.0)}")


def _row_name(g: Gen, sc: Scope, var: Var):
    row = g.fresh(sc)
    g.w.line(f"{row} = {var.name}[{index(g, sc)}]")
    g.w.line(f"{row} += {strip(expr(g, sc, g.pick(['S', 'V'])))}")
    sc.add(Var(row, "V", alias=True))
