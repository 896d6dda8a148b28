"""Deterministic names for generated code, and the reserved-name mechanism.

Invariant: a `Namer` never hands out a name that anything the user's
function can see already uses -- its parameters and locals, every name its
source mentions, and the names *visible* to it: its module's globals, its
closure variables, the builtins, and names bound while it is compiled (lifted
nested functions, imports inside it).  So a generated name (`dx`, `tape`,
`x_old`, `trips`, the adjoint function `df` itself, a pair `f_fwd`) can
neither capture a name the user's code reads nor be captured by one.  For
the same sequence of requests it hands out the same names: no randomness,
no id(), no hashing.  Names derive from the user's names (`dx` for `x`,
`x_1` for a second `x`).

Generated code never names a builtin directly either: normalization writes
`__s2s_ad_builtins__.range(...)` (see `builtin`), and the reverse transform
prints it as `range` when that name reaches the real builtin in the derived
function, or as a fresh alias (`range_1`) when the user's code rebinds it.
"""
from __future__ import annotations

import builtins
import keyword
import re
from typing import Mapping

_ILLEGAL = re.compile(r"[^0-9a-zA-Z_]")

# The reserved head under which normalized code reaches a builtin:
# `__s2s_ad_builtins__.len(x)` (no user code can mention a dunder like this).
BUILTINS = "__s2s_ad_builtins__"


def visible_scopes(globals_: Mapping, closure: Mapping, bound: Mapping) -> tuple:
    """The scopes a function's names resolve in besides its own locals:
    closure cells, module globals, builtins, and `bound` (names its
    compilation binds).  Mappings are kept by reference, not copied."""
    return (closure, globals_, builtins.__dict__, bound)


def _identifier(stem: str) -> str:
    """`stem` made a valid identifier that is no keyword."""
    stem = _ILLEGAL.sub("_", stem) or "t"
    return "_" + stem if stem[0].isdigit() or keyword.iskeyword(stem) else stem


class Namer:
    """Hands out fresh identifiers that avoid a set of taken ones and every
    name in the `visible` mappings (checked live, never copied)."""

    def __init__(self, taken: set[str] = frozenset(), visible: tuple = ()):
        self._taken: set[str] = set(taken)
        self._visible = visible
        self._numbered: dict[str, int] = {}     # temp hint -> numbers below are taken
        self._suffixed: dict[str, int] = {}     # fresh stem -> suffixes below are taken
        self.temps: set[str] = set()            # every name `temp` handed out

    def reserve(self, ident: str) -> None:
        self._taken.add(ident)

    def taken(self, ident: str) -> bool:
        return ident in self._taken or any(ident in scope for scope in self._visible)

    def snapshot(self) -> frozenset:
        return frozenset(self._taken)

    def restore(self, snapshot: frozenset) -> None:
        """Forget names handed out since `snapshot` (for regenerated code)."""
        self._taken = set(snapshot)
        self._numbered.clear()
        self._suffixed.clear()

    def fresh(self, stem: str) -> str:
        """`stem` itself if free, else `stem_1`, `stem_2`, ... (the scan
        resumes where the last for `stem` ended: names are never given
        back, so those below are taken still, and asking for one stem n
        times costs n, not n^2)."""
        stem = _identifier(stem)
        candidate, n = self._first_free(stem, self._suffixed.get(stem, 0))
        self._suffixed[stem] = n + 1
        return candidate

    def _first_free(self, stem: str, n: int) -> tuple[str, int]:
        candidate = f"{stem}_{n}" if n else stem
        while self.taken(candidate):
            n += 1
            candidate = f"{stem}_{n}"
        self._taken.add(candidate)
        return candidate, n

    def fresh_parameter(self, stem: str) -> str:
        """Like `fresh`, but a name that is merely visible (a global or
        builtin the function's code never mentions) stays available: for a
        parameter of the derived function that callers pass by keyword
        (`seed`), whose name is API.  Inside the derived function it can
        shadow only names that no code there reads."""
        visible, self._visible = self._visible, ()
        try:        # (from the start: a name only visible is free here)
            return self._first_free(_identifier(stem), 0)[0]
        finally:
            self._visible = visible

    def temp(self, hint: str = "t") -> str:
        """A temporary: always numbered, so it reads as generated (`_t1`)."""
        n = self._numbered.get(hint, 1)     # (names are never given back)
        while self.taken(f"_{hint}{n}"):
            n += 1
        ident = f"_{hint}{n}"
        self._taken.add(ident)
        self._numbered[hint] = n + 1
        self.temps.add(ident)
        return ident
