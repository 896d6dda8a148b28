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
             normalize/exprs.py for those, for chained comparisons and for
             `and`/`or` whose value may carry a gradient.

Every emitted statement maps to the user statement it came from in the
`origin` side table (used for `# grad of:` comments and error locations), and
carries that statement's line and column.

The package, in the order a statement meets it: `Normalizer` (here) walks
the user's statements in program order and dispatches each statement and
expression kind to its handler (`_STATEMENTS`, `_EXPRESSIONS`), a function
over the normalizer `nz` in the module of its construct:

    assign.py          `x = e`, unpacking         iteration.py  for, while
    calls.py           calls, `*t`, `**kw`, out=  blocks.py     with, try
    exprs.py           and/or, if-else, :=, <     scope.py      nested def,
    comprehensions.py  comprehensions -> loops                  lambda, import
    inplace.py         `x[i] = v`, `x += v`, `xs.append(v)`, ... as primitives

The alias analysis runs in the same walk, because what an update emits
depends on what the names share at that point: `aliasing.bind` and
`aliasing.passed` see every emitted statement (`Normalizer.emit`),
`compound.py` joins the relations across `if`s and loops, and
`writebacks.after_update` emits what keeps them true after an update.
`lift.py` compiles nested functions; `alias_parts.py` is the relation's
vocabulary.  The next sub-pass, `jumps.lower_jumps`, takes this grammar
and lowers `break`, `continue`, early `return` and loop `else`s.
"""
from __future__ import annotations

import collections
import functools

import gast

from .. import astutil, naming, scopes, traversal
from ..errors import UnsupportedSyntaxError
from ..ir import RUNTIME, Normalized, Source, is_opaque, is_resolved
from ..naming import Namer
from . import (alias_parts, aliasing, assign, blocks, calls, compound, comprehensions, exprs,
               inplace, iteration, masks, mutators, refusals, scope, sequences, spread)
from .exprs import binds


_LITERAL_KINDS = (int, float, complex, str, bytes, bool, type(None), type(...))


def normalize(src: Source, forward: bool = False) -> Normalized:
    """The ANF form of `src.tree` (a new tree; `src.tree` is not modified);
    `forward`: for forward mode (`inplace.restore`)."""
    fdef = src.tree
    refusals.outside_updates(src)
    locals_ = scopes.local_names(fdef)
    namer = Namer(src.user_names | locals_,
                  naming.visible_scopes(src.globals, src.closure, src.lifted))
    norm = Normalizer(src, locals_, namer)
    norm.forward = forward
    out = astutil.function_def(fdef.name, astutil.clone(fdef.args), norm.block(fdef.body))
    gast.copy_location(out, fdef)
    return Normalized(out, norm.origin, locals_, namer, norm.shares, norm.heirs,
                      norm.passes, norm.unbound, norm.while_tests)


class Normalizer:
    """The state of one walk: what the handlers read and write (each
    attribute is described where it is set), and the core every handler
    uses: `block`, `capture`, `emit`, `atom`, `rhs`, `unsupported`."""

    def __init__(self, src: Source, locals_: set[str], namer: Namer):
        self.src, self.locals, self.namer = src, locals_, namer
        self.origin: dict = {}
        self.stand_in: dict = {}        # lowered statement -> the user's it stands for
        self.renamed: dict = {}         # a comprehension's variable -> the user's name
        self.while_tests: dict = {}     # While -> statements recomputing its test
        self.nested: dict = {}          # nested function name -> lift.Lifted
        self.aliases: dict = {}         # name -> the set of names bound to its object
        self.maybe_aliases: dict = {}   # name -> names that may be bound to its object
        self.parts = alias_parts.PartTable()   # name -> [Part]: what it is a view or item of
        self.slot_items: dict = {}      # name -> the slots of its display (slot_items.py)
        self.rereads: set = set()       # views re-read after an update
        self.temps: list = []           # expression temporaries of the statements being normalized
        self.statement_start = 0        # ...where the innermost one's start
        self.retired: set = set()       # ...of those done: the user's code reads them no more
        self.shares: dict = {}          # see Normalized.shares
        self.heirs: dict = {}           # see Normalized.heirs
        self.loose: set = set()         # updated by `op=`: one object with its aliases if an array
        self.passes: dict = {}          # see Normalized.passes
        self.unbound: set = set()       # see Normalized.unbound
        self.loops: list = []           # the loops being normalized, with their element reads
        self.loop_updates: set = set()  # what the body of the loop being entered updates
        self.displays: dict = {}        # name bound once to a display -> its items
        self.keyed: dict = {}           # name bound once to a dict display -> its str keys
        self.sequences: set = set()     # names that may hold a list, tuple or dict built here
        self.containers: set = set()    # names that surely do (sequences.surely_built)
        self.unlinked: set = set()      # {a, b}: maybe one object, no slot between (slot_replaced)
        self.joined: dict = {}          # list made by + or * -> the names it shares items with
        self.masked: set = set()        # names bound to a value stop_gradient returned
        self.unmasked: set = set()      # names bound to another value
        self._read_user_code(src.tree)
        self.bool_names: dict = {}      # name -> whether only bools are bound to it
        self.forward = False            # normalizing for forward mode
        self.depth = 0                  # nesting of compound statements
        self.out: list = []
        self.user_stmt = None
        masks.note_masks(self)
        self.containers = sequences.surely_built(self)

    def _read_user_code(self, tree) -> None:
        """What the passes ask of the user's function as written (one walk)."""
        self.params = {a.id for a in scopes.params(tree.args)}
        every = traversal.nodes(tree)
        names = [n for n in every if type(n) is gast.Name]     # (in `names`' order)
        self.loop_stored = {n for node in every     # bound in a loop
                            if isinstance(node, (gast.For, gast.While))
                            for n in scopes.stored_names(node)}
        self.store_counts = collections.Counter(    # name -> stores in the user's code
            n.id for n in names if type(n.ctx) is gast.Store)
        self.augmented = {n.id for node in every    # updated by `op=`
                          if isinstance(node, gast.AugAssign)
                          for n in traversal.walk(node.target) if isinstance(n, gast.Name)}
        self.last_read: dict = {}       # name -> where the user's code last reads it
        for node in names:
            if type(node.ctx) is gast.Load and \
                    (node.lineno, node.col_offset) > self.last_read.get(node.id, (0, 0)):
                self.last_read[node.id] = (node.lineno, node.col_offset)

    # -- statements -------------------------------------------------------
    def block(self, stmts: list) -> list:
        saved, self.out = self.out, []
        outer = self.user_stmt
        self.depth += outer is not None
        for stmt in stmts:
            self.user_stmt = stmt
            handler = _STATEMENTS.get(type(stmt))
            if handler is None:
                self.unsupported(stmt, astutil.describe(stmt))
            outer_start, self.statement_start = self.statement_start, len(self.temps)
            handler(self, stmt)
            self.retired.update(self.temps[self.statement_start:])
            del self.temps[self.statement_start:]
            self.statement_start = outer_start
        self.user_stmt = outer
        self.depth -= outer is not None
        out, self.out = self.out, saved
        return out

    def capture(self, fn) -> list:
        """The statements `fn()` emits, as a separate list."""
        saved, self.out = self.out, []
        fn()
        out, self.out = self.out, saved
        return out

    def emit(self, stmt) -> None:
        user = self.user_stmt
        gast.copy_location(stmt, user)
        self.origin[stmt] = self.stand_in.get(user, user)
        self.out.append(stmt)
        if isinstance(stmt, (gast.Assign, gast.Expr)):
            aliasing.passed(self, stmt)
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0].id
            aliasing.bind(self, stmt)
            self.displays.pop(target, None)
            self.keyed.pop(target, None)
            once = self.depth == 0 and self.store_counts[target] == 1
            if isinstance(stmt.value, (gast.Tuple, gast.List)) and once:
                self.displays[target] = stmt.value.elts
            elif isinstance(stmt.value, gast.Dict) and once and all(
                    isinstance(k, gast.Constant) and isinstance(k.value, str)
                    and k.value.isidentifier() for k in stmt.value.keys):
                self.keyed[target] = [k.value for k in stmt.value.keys]


    def s_Return(self, stmt: gast.Return) -> None:
        value = stmt.value if stmt.value is not None else astutil.const(None)
        if isinstance(value, gast.Tuple):
            self.emit(astutil.ret(astutil.tuple_([self.atom(e) for e in value.elts])))
        else:
            self.emit(astutil.ret(self.atom(value)))

    def s_Expr(self, stmt: gast.Expr) -> None:
        if isinstance(stmt.value, gast.Constant):
            return                          # a docstring or a bare literal
        if isinstance(stmt.value, gast.Call) and inplace.mutation(self, stmt.value):
            return                          # an in-place update, as an assignment
        if isinstance(stmt.value, gast.Call):
            inplace.refuse_nonlocal_update(self, stmt.value)
        value = self.rhs(stmt.value)
        if not isinstance(value, gast.Call) and not self._opaque(stmt.value):
            return                          # an expression without effect
        self.emit(astutil.expr_stmt(value))

    def s_Pass(self, stmt) -> None:
        pass

    def s_Delete(self, stmt) -> None:
        pass        # `del name`: nothing reads the name again (deletions.py)

    def s_If(self, stmt: gast.If) -> None:
        before = compound.enter_compound(self, stmt)
        test = exprs.decision(self, stmt.test)
        if isinstance(test, gast.Name) and test.id in scopes.stored_names(stmt):
            test = self._copy(test)     # the reverse sweep reads the test after the branch
        body, orelse = compound.branches(self, lambda: self.block(stmt.body),
                                      lambda: self.block(stmt.orelse))
        branch = astutil.if_(test, body, orelse)
        self.emit(branch)
        compound.leave_compound(self, stmt, before, branch)

    def _copy(self, atom: gast.Name) -> gast.Name:
        t = self.namer.temp()
        self.emit(astutil.assign(t, atom))
        return astutil.name(t)

    def s_Assert(self, stmt: gast.Assert) -> None:
        self.emit(astutil.assert_(astutil.clone(stmt.test), astutil.clone(stmt.msg)))

    def s_Raise(self, stmt: gast.Raise) -> None:
        """`raise E` as written, in the primal code, as an `assert` is: where
        it runs, the derived function raises what the function raises (no
        derivative is computed past it)."""
        self.emit(astutil.clone(stmt))

    # -- expressions ------------------------------------------------------
    def atom(self, expr) -> gast.expr:
        """An atom with the value of `expr` (emitting temporaries as needed)."""
        if isinstance(expr, gast.Lambda):           # a lifted function, or rt.bind(...)
            expr = scope.e_Lambda(self, expr)
        elif isinstance(expr, gast.Name) and expr.id in self.nested:
            expr = scope.function_value(self, expr)
        if self.is_atom(expr):
            return astutil.clone(expr)
        if isinstance(expr, gast.NamedExpr):        # `(n := e)`: n = e, then n
            return exprs.e_NamedExpr(self, expr)
        value = self.rhs(expr)
        t = self.namer.temp(_stem(expr))
        self.temps.append(t)
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
            return scope.function_value(self, expr)
        if self.is_atom(expr):
            return astutil.clone(expr)
        if self._opaque(expr) and not binds(expr) and not exprs.value_of_boolop(self, expr):
            return self._relink(astutil.clone(expr))
        if self._opaque(expr) and not isinstance(expr, (gast.Compare, gast.BoolOp,
                                                        gast.UnaryOp, gast.Call)):
            self.unsupported(expr, "an assignment expression (:=) inside "
                              + astutil.describe(expr))
        handler = _EXPRESSIONS.get(type(expr))
        if handler is None:
            self.unsupported(expr, astutil.describe(expr))
        return handler(self, expr)

    def _relink(self, expr):
        """`expr` (kept verbatim) with calls of nested functions going to the
        lifted ones, passing what they read."""
        for node in traversal.walk(expr):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                    and node.func.id in self.nested:
                call = self.nested[node.func.id].call(node.args, node.keywords, functools.partial(
                    spread.known_items, self), self.unsupported)
                node.func, node.args, node.keywords = call.func, call.args, call.keywords
        return expr

    def _opaque(self, expr) -> bool:
        """Kept verbatim: nothing in it is differentiated, and it writes
        into no local (`np.floor(a, out=y)` is an update of `y`, and
        `r = np.random.shuffle(y)` is refused)."""
        return is_opaque(expr, self.src, self.locals) and not (
            isinstance(expr, gast.Call) and (calls.passes_out(self, expr) or
            mutators.opaque_target(self, expr, self.src.resolve(expr.func, self.locals))))

    def e_BinOp(self, expr):
        return astutil.binop(self.atom(expr.left), expr.op, self.atom(expr.right))

    def e_UnaryOp(self, expr):
        return astutil.unary(expr.op, self.atom(expr.operand))

    def e_Attribute(self, expr):
        return astutil.attribute(self.atom(expr.value), expr.attr)

    def e_Subscript(self, expr):
        base = expr.value
        if isinstance(base, gast.Attribute) and base.attr == "flat":     # a copy
            return astutil.call(f"{RUNTIME}.flat_get", [
                self.atom(base.value), astutil.index_value(self.index(expr.slice))])
        return astutil.subscript(self.atom(base), self.index(expr.slice))

    def index(self, index):
        if isinstance(index, gast.Slice):
            return astutil.slice_(*(None if part is None else self.atom(part)
                                    for part in (index.lower, index.upper, index.step)))
        if isinstance(index, gast.Tuple):
            return astutil.tuple_([self.index(e) for e in index.elts])
        return self.atom(index)

    def e_Dict(self, expr):
        if any(k is None for k in expr.keys):
            self.unsupported(expr, "`**` unpacking in a dict display")
        return astutil.dict_([self.atom(k) for k in expr.keys],
                             [self.atom(v) for v in expr.values])

    def e_Tuple(self, expr):
        return astutil.tuple_([self.atom(e) for e in expr.elts])

    def e_List(self, expr):
        return astutil.list_([self.atom(e) for e in expr.elts])

    def unsupported(self, node, what: str):
        raise UnsupportedSyntaxError(
            f"s2s_ad cannot differentiate {what}", self.src.locate(node),
            hint="rewrite it, or wrap the value it computes in "
                 "`stop_gradient(...)` if no gradient should flow through it")


N = Normalizer
# statement and expression kinds -> their handler(normalizer, node); a kind
# missing here is refused, located
_STATEMENTS = {
    gast.Assign: assign.s_Assign, gast.AnnAssign: assign.s_AnnAssign, gast.AugAssign: inplace.s_AugAssign,
    gast.Return: N.s_Return, gast.Expr: N.s_Expr, gast.Pass: N.s_Pass, gast.Delete: N.s_Delete,
    gast.If: N.s_If, gast.Assert: N.s_Assert, gast.Raise: N.s_Raise,
    gast.For: iteration.s_For,
    gast.While: iteration.s_While, gast.Break: iteration.s_Break,
    gast.Continue: iteration.s_Continue, gast.With: blocks.s_With, gast.Try: blocks.s_Try,
    gast.FunctionDef: scope.s_FunctionDef, gast.Import: scope.s_Import,
    gast.ImportFrom: scope.s_ImportFrom}
_EXPRESSIONS = {
    gast.BinOp: N.e_BinOp, gast.UnaryOp: N.e_UnaryOp, gast.Attribute: N.e_Attribute,
    gast.Subscript: N.e_Subscript, gast.Dict: N.e_Dict, gast.Tuple: N.e_Tuple,
    gast.List: N.e_List, gast.Call: calls.e_Call, gast.ListComp: comprehensions.e_ListComp,
    gast.SetComp: comprehensions.e_SetComp, gast.DictComp: comprehensions.e_DictComp,
    gast.GeneratorExp: comprehensions.e_GeneratorExp, gast.NamedExpr: exprs.e_NamedExpr,
    gast.Compare: exprs.e_Compare, gast.BoolOp: exprs.e_BoolOp, gast.IfExp: exprs.e_IfExp,
    gast.Lambda: scope.e_Lambda}
del N


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
