"""The intermediate representation: what passes between the stages.

The stages (frontend -> normalize -> primitives and analysis -> reverse ->
optimize -> codegen; docs/architecture.md) take and return these types and
depend on this module and `astutil`, never on each other for a type, so a
stage can be read, printed (`s2s-ad dump --stage`) and replaced alone:

- the reserved names through which normalized and generated code reach
  s2s_ad's own modules (`RUNTIME`, `OPERATORS`, `NUMPY`, and `BUILTINS`
  from naming.py), which no user code can mention;
- `Source`: a function's parsed source and the scope its names resolve in;
- `is_opaque`: the expressions nothing in which is differentiated, which
  normalization keeps verbatim and the primitives take for constants;
- `Normalized`: the A-normal-form function and its alias tables;
- `Prim`: what one ANF assignment computes (its kind, `COPY` ... `CALL`);
- `Facts` and its `ShapeFacts`: the analyses' results;
- `Request`, `PairRef`, `Adjoint`: what the reverse transform is asked
  for and returns;
- `Block` and `Split` (gast statements, built in astutil): the structure
  of generated code.

The package holds them by what they describe: `program.py` (reserved
names, `Source`, `is_opaque`, `Normalized`), `prims.py` (`Prim` and the
in-place primitives), `facts.py` (`Facts`, `ShapeFacts`) and `adjoint.py`
(`Request`, `PairRef`, `Site`, `Adjoint`); stages import them from here.

Invariant: side tables are dicts keyed by the gast node itself (nodes hash
by identity); nothing is ever stored on a node.
"""
from __future__ import annotations

from ..astutil import Block, Split
from ..naming import BUILTINS
from .adjoint import Adjoint, PairRef, Request, Site
from .facts import Facts, ShapeFacts
from .prims import (CALL, CALLEE, CONST, COPY, DYNAMIC, INPLACE, INPLACE_OPERATORS,
                    MUTATING_METHODS, RULE, SEQUENCE_OPERATORS, UNKNOWN, Prim, Star,
                    StarStar, member, names_of, with_marker)
from .program import (CLOSURE, GLOBAL, IMPORTED, NUMPY, OPERATORS, RUNTIME, Normalized,
                      Source, is_opaque, is_resolved)

__all__ = ["BUILTINS", "Block", "NUMPY", "OPERATORS", "RUNTIME", "Split", "Source",
           "Normalized", "Prim", "Facts", "ShapeFacts", "Request", "PairRef", "Adjoint", "Site",
           "CALLEE", "COPY", "CONST", "RULE", "UNKNOWN", "CALL", "DYNAMIC", "INPLACE", "MUTATING_METHODS",
           "INPLACE_OPERATORS", "CLOSURE", "GLOBAL", "IMPORTED", "SEQUENCE_OPERATORS", "is_opaque", "is_resolved",
           "names_of", "with_marker", "Star", "StarStar", "member"]
