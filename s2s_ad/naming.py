"""Deterministic names for generated code.

Invariant: a `Namer` never hands out a name that the user's function (or an
earlier call to the same `Namer`) already uses, and for the same sequence of
requests it hands out the same names: no randomness, no id(), no hashing.
Names derive from the user's names (`dx` for `x`, `x_1` for a second `x`).
"""
from __future__ import annotations

import keyword
import re

_ILLEGAL = re.compile(r"[^0-9a-zA-Z_]")


class Namer:
    """Hands out fresh identifiers that avoid a set of taken ones."""

    def __init__(self, taken: set[str] = frozenset()):
        self._taken: set[str] = set(taken)

    def reserve(self, ident: str) -> None:
        self._taken.add(ident)

    def taken(self, ident: str) -> bool:
        return ident in self._taken

    def snapshot(self) -> frozenset:
        return frozenset(self._taken)

    def restore(self, snapshot: frozenset) -> None:
        """Forget names handed out since `snapshot` (for regenerated code)."""
        self._taken = set(snapshot)

    def fresh(self, stem: str) -> str:
        """`stem` itself if free, else `stem_1`, `stem_2`, ..."""
        stem = _ILLEGAL.sub("_", stem) or "t"
        if stem[0].isdigit() or keyword.iskeyword(stem):
            stem = "_" + stem
        candidate, n = stem, 0
        while candidate in self._taken:
            n += 1
            candidate = f"{stem}_{n}"
        self._taken.add(candidate)
        return candidate

    def temp(self, hint: str = "t") -> str:
        """A temporary: always numbered, so it reads as generated (`_t1`)."""
        n = 1
        while f"_{hint}{n}" in self._taken:
            n += 1
        ident = f"_{hint}{n}"
        self._taken.add(ident)
        return ident

