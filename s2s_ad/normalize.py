"""Normalize a function body into A-normal form (ANF).

The grammar guaranteed on output (every later pass relies on it):

    stmt  := Name = rhs                      one Name target, always; an in-place
                                             update is `x = setitem(x, i, v)` or
                                             `a = iadd(a, b)` (s2s_ad's own names)
           | Expr(rhs)                       a call kept for its effect
           | If(atom, [stmt], [stmt])          the atom is not assigned in
                                             either branch
           | For(Name, atom, [stmt])
           | While(atom, [stmt])             the statements recomputing the
                                             test are `while_tests[loop]`
           | Break | Continue
           | Return(atom | Tuple(atom*))     anywhere (jumps.py lowers
                                             early returns, `break`,
                                             `continue` and loop `else`s
                                             next: its docstring says to what)
    rhs   := atom | BinOp(atom, op, atom) | UnaryOp(op, atom)
           | Call(callee, atom*, keyword=atom*) | Attribute(atom, attr)
           | Subscript(atom, index) | Tuple(atom*) | List(atom*) | Dict(atom: atom*)
           | opaque
    atom  := Name | literal | static   (a literal may be a tuple of literals
                                        or a negated number; a static is a
                                        dotted name resolving to a module
                                        attribute, e.g. `np.pi`)
    callee:= static | Attribute(atom, method)
    (a call argument may also be a tuple or list literal of such arguments)
    opaque:= an expression kept verbatim because nothing in it is
             differentiated: `stop_gradient(e)`, calls of functions declared
             non-differentiable, comparisons, `not`, `and`/`or` of those,
             f-strings; never one that binds a name (`:=`): see
             normalize_exprs.py for those, for chained comparisons and for
             `and`/`or` whose value may carry a gradient.

Every emitted statement maps to the user statement it came from in the
`origin` side table (used for `# grad of:` comments and error locations), and
carries that statement's line and column.
"""
from __future__ import annotations

import collections

import gast

from . import astutil, naming, scopes, traversal
from .errors import UnsupportedSyntaxError
from .ir import RUNTIME, Normalized, Source, is_opaque, is_resolved
from .naming import Namer
from .normalize_aliases import AliasForms
from .normalize_compound import CompoundForms
from .normalize_blocks import BlockForms
from .normalize_calls import CallForms
from .normalize_comprehensions import ComprehensionForms
from .normalize_updates import UpdateForms
from .normalize_exprs import ControlExprForms, binds
from .normalize_inplace import InPlaceForms
from .normalize_loops import LoopForms
from .normalize_scope import ScopeForms

_LITERAL_KINDS = (int, float, complex, str, bytes, bool, type(None), type(...))


def normalize(src: Source) -> Normalized:
    """The ANF form of `src.tree` (a new tree; `src.tree` is not modified)."""
    fdef = src.tree
    locals_ = scopes.local_names(fdef)
    namer = Namer(scopes.all_names(fdef) | locals_,
                  naming.visible_scopes(src.globals, src.closure, src.lifted))
    norm = _Normalizer(src, locals_, namer)
    out = astutil.function_def(fdef.name, astutil.clone(fdef.args), norm.block(fdef.body))
    gast.copy_location(out, fdef)
    return Normalized(out, norm.origin, locals_, namer, norm.shares, norm.heirs,
                      norm.passes, norm.unbound, norm.while_tests)


class _Normalizer(LoopForms, BlockForms, ControlExprForms, ComprehensionForms, CallForms,
                  InPlaceForms, AliasForms, CompoundForms, UpdateForms, ScopeForms):
    def __init__(self, src: Source, locals_: set[str], namer: Namer):
        self.src, self.locals, self.namer = src, locals_, namer
        self.origin: dict = {}
        self.stand_in: dict = {}        # lowered statement -> the user's it stands for
        self.renamed: dict = {}         # a comprehension's variable -> the user's name
        self.while_tests: dict = {}     # While -> statements recomputing its test
        self.nested: dict = {}          # nested function name -> lift.Lifted
        self.aliases: dict = {}         # name -> the set of names bound to its object
        self.maybe_aliases: dict = {}   # name -> names that may be bound to its object
        self.parts: dict = {}           # name -> [Part]: what it is a view or item of
        self.tuples: dict = {}          # name -> the names of the tuple display it holds
        self.rereads: set = set()       # views re-read after an update
        self.shares: dict = {}          # see Normalized.shares
        self.heirs: dict = {}           # see Normalized.heirs
        self.loose: set = set()         # updated by `op=`: one object with its aliases if an array
        self.passes: dict = {}          # see Normalized.passes
        self.unbound: set = set()       # see Normalized.unbound
        self.user_names = None          # every name in the user's function
        self.loops: list = []           # the loops being normalized, with their element reads
        self.displays: dict = {}        # name bound once to a display -> its items
        self.keyed: dict = {}           # name bound once to a dict display -> its str keys
        self.sequences: set = set()     # names that may hold a list or tuple built here
        self.joined: dict = {}          # list made by + or * -> the names it shares items with
        self.masked: set = set()        # names bound to a value stop_gradient returned
        self.unmasked: set = set()      # names bound to another value
        self.params = {a.id for a in scopes.params(src.tree.args)}
        self.loop_stored = {n for node in traversal.walk(src.tree)   # bound in a loop
                            if isinstance(node, (gast.For, gast.While))
                            for n in scopes.stored_names(node)}
        self.store_counts = collections.Counter(    # name -> stores in the user's code
            n.id for n in traversal.walk(src.tree)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
        self.depth = 0                  # nesting of compound statements
        self._out: list = []
        self._stmt = None
        self._note_masks()

    # -- statements -------------------------------------------------------
    def block(self, stmts: list) -> list:
        saved, self._out = self._out, []
        outer = self._stmt
        self.depth += outer is not None
        for stmt in stmts:
            self._stmt = stmt
            handler = getattr(self, "s_" + type(stmt).__name__, None)
            if handler is None:
                self._unsupported(stmt, astutil.describe(stmt))
            handler(stmt)
        self._stmt = outer
        self.depth -= outer is not None
        out, self._out = self._out, saved
        return out

    def capture(self, fn) -> list:
        """The statements `fn()` emits, as a separate list."""
        saved, self._out = self._out, []
        fn()
        out, self._out = self._out, saved
        return out

    def emit(self, stmt) -> None:
        user = self._stmt
        gast.copy_location(stmt, user)
        self.origin[stmt] = self.stand_in.get(user, user)
        self._out.append(stmt)
        if isinstance(stmt, (gast.Assign, gast.Expr)):
            self._passed(stmt)
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0].id
            self._bind(stmt)
            self.displays.pop(target, None)
            self.keyed.pop(target, None)
            once = self.depth == 0 and self.store_counts[target] == 1
            if isinstance(stmt.value, (gast.Tuple, gast.List)) and once:
                self.displays[target] = stmt.value.elts
            elif isinstance(stmt.value, gast.Dict) and once and all(
                    isinstance(k, gast.Constant) and isinstance(k.value, str)
                    and k.value.isidentifier() for k in stmt.value.keys):
                self.keyed[target] = [k.value for k in stmt.value.keys]

    def s_Assign(self, stmt: gast.Assign) -> None:
        targets = stmt.targets
        if len(targets) == 1 and isinstance(targets[0], gast.Name) \
                and isinstance(stmt.value, gast.Lambda):
            self._lift(stmt.value, targets[0].id)
            return
        if len(targets) == 1 and isinstance(targets[0], gast.Name):
            self.emit(astutil.assign(targets[0].id, self.rhs(stmt.value)))
            return
        value = self.atom(stmt.value) if len(targets) > 1 else None
        for target in targets:
            self._assign_target(target, value if value is not None else stmt.value)

    def _assign_target(self, target, value) -> None:
        if isinstance(target, gast.Name):
            self.emit(astutil.assign(target.id, self.rhs(value)))
        elif isinstance(target, (gast.Tuple, gast.List)):
            self._unpack(target, value)
        elif isinstance(target, gast.Subscript):
            base, index = self._subscript_target(target)
            self._setitem(base, index, self.atom(value))
        else:
            self._unsupported(target, "assignment to " + astutil.describe(target))

    def _unpack(self, target, value) -> None:
        elts = target.elts
        if any(isinstance(e, gast.Starred) for e in elts):
            return self._unpack_starred(target, value)
        if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(elts):
            # Evaluate every element before assigning any (swap semantics).
            atoms = [self._fresh_atom(v, target) for v in value.elts]
        else:
            whole = self.atom(value)
            atoms = []
            for i in range(len(elts)):
                t = self.namer.temp()
                self.emit(astutil.assign(t, astutil.subscript(
                    astutil.clone(whole), astutil.const(i))))
                atoms.append(astutil.name(t))
        for elt, atom in zip(elts, atoms):
            self._assign_target(elt, atom)

    def _unpack_starred(self, target, value) -> None:
        """`a, *rest, b = value`: the items of `list(value)` by position, the
        starred name a list of those in between, after the check Python
        makes (`rt.check_unpack`: at least as many items as names)."""
        elts = target.elts
        star = next(i for i, e in enumerate(elts) if isinstance(e, gast.Starred))
        if sum(isinstance(e, gast.Starred) for e in elts) > 1:
            self._unsupported(target, "two starred names in one assignment")
        items = self.namer.temp("items")
        self.emit(astutil.assign(items, astutil.call(astutil.builtin("list"),
                                                     [self.atom(value)])))
        self.emit(astutil.expr_stmt(astutil.call(f"{RUNTIME}.check_unpack", [
            astutil.name(items), astutil.const(len(elts) - 1)])))
        after = len(elts) - star - 1
        parts = []
        for i, elt in enumerate(elts):
            if i == star:
                stop = astutil.const(-after) if after else None
                index = astutil.slice_(astutil.const(star), stop, None)
            else:
                index = astutil.const(i if i < star else i - len(elts))
            part = self.namer.temp()
            self.emit(astutil.assign(part, astutil.subscript(astutil.name(items), index)))
            parts.append(astutil.name(part))
        for elt, part in zip(elts, parts):
            self._assign_target(elt.value if isinstance(elt, gast.Starred) else elt, part)

    def _fresh_atom(self, value, target):
        """An atom for `value` that assignments to `target` cannot clobber."""
        atom = self.atom(value)
        stored = {n.id for n in traversal.walk(target) if isinstance(n, gast.Name)}
        if isinstance(atom, gast.Name) and atom.id in stored:
            t = self.namer.temp()
            self.emit(astutil.assign(t, atom))
            return astutil.name(t)
        return atom

    def s_AnnAssign(self, stmt: gast.AnnAssign) -> None:
        if stmt.value is not None:
            self._assign_target(stmt.target, stmt.value)

    def s_Return(self, stmt: gast.Return) -> None:
        value = stmt.value if stmt.value is not None else astutil.const(None)
        if isinstance(value, gast.Tuple):
            self.emit(astutil.ret(astutil.tuple_([self.atom(e) for e in value.elts])))
        else:
            self.emit(astutil.ret(self.atom(value)))

    def s_Expr(self, stmt: gast.Expr) -> None:
        if isinstance(stmt.value, gast.Constant):
            return                          # a docstring or a bare literal
        if isinstance(stmt.value, gast.Call) and self._mutation(stmt.value):
            return                          # an in-place update, as an assignment
        value = self.rhs(stmt.value)
        if not isinstance(value, gast.Call) and not self._opaque(stmt.value):
            return                          # an expression without effect
        self.emit(astutil.expr_stmt(value))

    def s_Pass(self, stmt) -> None:
        pass

    def s_Delete(self, stmt) -> None:
        pass        # `del name`: nothing reads the name again (deletions.py)

    def s_If(self, stmt: gast.If) -> None:
        before = self._enter_compound(stmt)
        test = self.atom(stmt.test)
        if isinstance(test, gast.Name) and test.id in scopes.stored_names(stmt):
            test = self._copy(test)     # the reverse sweep reads the test after the branch
        body, orelse = self._branches(lambda: self.block(stmt.body),
                                      lambda: self.block(stmt.orelse))
        branch = astutil.if_(test, body, orelse)
        self.emit(branch)
        self._leave_compound(stmt, before, branch)

    def _copy(self, atom: gast.Name) -> gast.Name:
        t = self.namer.temp()
        self.emit(astutil.assign(t, atom))
        return astutil.name(t)

    def s_Assert(self, stmt: gast.Assert) -> None:
        self.emit(astutil.assert_(astutil.clone(stmt.test), astutil.clone(stmt.msg)))

    # -- expressions ------------------------------------------------------
    def atom(self, expr) -> gast.expr:
        """An atom with the value of `expr` (emitting temporaries as needed)."""
        if isinstance(expr, gast.Lambda):           # a lifted function, or rt.bind(...)
            expr = self.e_Lambda(expr)
        elif isinstance(expr, gast.Name) and expr.id in self.nested:
            expr = self._function_value(expr)
        if self.is_atom(expr):
            return astutil.clone(expr)
        if isinstance(expr, gast.NamedExpr):        # `(n := e)`: n = e, then n
            return self.e_NamedExpr(expr)
        value = self.rhs(expr)
        t = self.namer.temp(_stem(expr))
        self.emit(astutil.assign(t, value))
        return astutil.name(t)

    def is_atom(self, expr) -> bool:
        if isinstance(expr, gast.Name):
            return True
        if isinstance(expr, gast.Constant):
            return isinstance(expr.value, _LITERAL_KINDS)
        if astutil.is_number(expr):
            return True
        if isinstance(expr, gast.Tuple):
            return all(isinstance(e, gast.Constant) or astutil.is_number(e)
                       for e in expr.elts)
        if isinstance(expr, gast.Attribute):
            obj = self.src.resolve(expr, self.locals)
            return is_resolved(obj)
        return False

    def rhs(self, expr) -> gast.expr:
        """`expr` as one primitive operation over atoms."""
        if isinstance(expr, gast.Name) and expr.id in self.nested:
            return self._function_value(expr)
        if self.is_atom(expr):
            return astutil.clone(expr)
        if self._opaque(expr) and not binds(expr) and not self._value_of_boolop(expr):
            return self._relink(astutil.clone(expr))
        if self._opaque(expr) and not isinstance(expr, (gast.Compare, gast.BoolOp,
                                                        gast.UnaryOp, gast.Call)):
            self._unsupported(expr, "an assignment expression (:=) inside "
                              + astutil.describe(expr))
        handler = getattr(self, "e_" + type(expr).__name__, None)
        if handler is None:
            self._unsupported(expr, astutil.describe(expr))
        return handler(expr)

    def _relink(self, expr):
        """`expr` (kept verbatim) with calls of nested functions going to the
        lifted ones, passing what they read."""
        for node in traversal.walk(expr):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                    and node.func.id in self.nested:
                call = self.nested[node.func.id].call(node.args, node.keywords)
                node.func, node.args, node.keywords = call.func, call.args, call.keywords
        return expr

    def _opaque(self, expr) -> bool:
        return is_opaque(expr, self.src, self.locals)

    def e_BinOp(self, expr):
        return astutil.binop(self.atom(expr.left), expr.op, self.atom(expr.right))

    def e_UnaryOp(self, expr):
        return astutil.unary(expr.op, self.atom(expr.operand))

    def e_Attribute(self, expr):
        return astutil.attribute(self.atom(expr.value), expr.attr)

    def e_Subscript(self, expr):
        return astutil.subscript(self.atom(expr.value), self._index(expr.slice))

    def _index(self, index):
        if isinstance(index, gast.Slice):
            return astutil.slice_(*(None if part is None else self.atom(part)
                                    for part in (index.lower, index.upper, index.step)))
        if isinstance(index, gast.Tuple):
            return astutil.tuple_([self._index(e) for e in index.elts])
        return self.atom(index)

    def e_Dict(self, expr):
        if any(k is None for k in expr.keys):
            self._unsupported(expr, "`**` unpacking in a dict display")
        return astutil.dict_([self.atom(k) for k in expr.keys],
                             [self.atom(v) for v in expr.values])

    def e_Tuple(self, expr):
        return astutil.tuple_([self.atom(e) for e in expr.elts])

    def e_List(self, expr):
        return astutil.list_([self.atom(e) for e in expr.elts])

    def _unsupported(self, node, what: str):
        raise UnsupportedSyntaxError(
            f"s2s_ad cannot differentiate {what}", self.src.locate(node),
            hint="rewrite it, or wrap the value it computes in "
                 "`stop_gradient(...)` if no gradient should flow through it")


def _stem(expr) -> str:
    """A readable stem for the temporary holding `expr`: the callee's name;
    for `stop_gradient(f(x))`, `f`'s."""
    if isinstance(expr, gast.Call) and astutil.dotted_name(expr.func) and \
            astutil.dotted_name(expr.func).endswith("stop_gradient") and len(expr.args) == 1:
        expr = expr.args[0]
    if isinstance(expr, gast.Call):
        path = astutil.dotted_name(expr.func)
        if path:
            return path.rsplit(".", 1)[-1]
        if isinstance(expr.func, gast.Attribute):
            return expr.func.attr
    return "t"
