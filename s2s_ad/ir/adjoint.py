"""What the reverse transform is asked for (`Request`, `PairRef`) and
returns (`Adjoint`, with the `Site` of each contribution for lower.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import gast


# -- the reverse transform -------------------------------------------------------
@dataclass
class Request:
    """What to generate: which parameters, which output, what to return."""

    wrt: list[str]
    mode: str = "grad"          # "grad", "value_and_grad", "vjp" or "pair"
    has_aux: bool = False
    seed: str | None = None     # name of the cotangent parameter (vjp, pair)
    single: bool = True         # return one gradient, not a tuple
    # (callee, variant, location) -> PairRef: the adjoint pair of a user
    # function called with the parameters `variant` varied (callee None: a
    # function value, whose pair a `PairRef.site` finds at run time)
    pairs: Callable | None = None


@dataclass(frozen=True)
class PairRef:
    """A callee's generated forward/backward functions, for a caller to use:
    the names they prefer to be imported under, and the functions.

    `objects` is None while the pair itself is being compiled (recursion):
    the caller is then that pair, and calls its own defs."""
    fwd: str | None
    bwd: str | None
    objects: tuple | None = None
    # a dispatch.CallSite that finds the pair when the call runs: for a
    # function value, and for helpers that call each other
    site: object = None


@dataclass
class Site:
    """A contribution the reverse sweep wrote, `d = v` or `d = d + v`
    (`accumulate`), for lower.py: `primal` gets it from the rule of
    `stmt`, taken as the adjoint of `value_name` (its old value when the
    statement rebinds it); `rule` (not a copy or a callee's) and
    `elementwise` say which shape decisions apply."""

    stmt: gast.Assign
    primal: str
    value_name: str
    rule: bool
    elementwise: bool
    accumulate: bool


@dataclass
class Adjoint:
    """The reverse transform's result: the adjoint function (pair mode: one
    def that pairs.py cuts at its `Split`) and what printing it needs."""

    tree: gast.FunctionDef
    imports: dict = field(default_factory=dict)   # name -> object
    seed_param: str | None = None                 # pair mode: the cotangent
    scalars: frozenset = frozenset()              # locals known to hold scalars
    pair_names: tuple | None = None               # pair mode: (fwd, bwd, saved)
    temp_adjoints: dict = field(default_factory=dict)    # adjoint of a temporary -> it
    sites: dict = field(default_factory=dict)     # contribution statement -> Site
    rule_starts: dict = field(default_factory=dict)   # see lower.py
    rt: str = "rt"                                # the identifier of s2s_ad's runtime
