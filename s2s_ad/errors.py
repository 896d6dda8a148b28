"""Errors raised by s2s_ad.

Invariant: every error about user code is an `S2SADError` that carries the
file, line and column of the offending construct, the source line itself, and
a sentence saying what to do about it.  `str(err)` renders all of that, so a
CLI or a test can show it as is.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A point in user source: 1-based line, 0-based column (like `ast`)."""

    filename: str
    line: int
    col: int
    source_line: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col + 1}"


class S2SADError(Exception):
    """Base class of every error s2s_ad raises about user code or usage."""

    def __init__(self, message: str, location: Location | None = None,
                 hint: str = ""):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        text = self.message
        if self.location is not None:
            text = f"{self.location}: {text}"
            if self.location.source_line.strip():
                text += f"\n    {self.location.source_line.strip()}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def one_line(self) -> str:
        """The message on one line, as the CLI prints it."""
        where = f"{self.location}: " if self.location else ""
        hint = f" ({self.hint})" if self.hint else ""
        return f"{where}{self.message}{hint}"


class UnsupportedSyntaxError(S2SADError):
    """A construct that s2s_ad cannot differentiate (outside `stop_gradient`)."""


class NoRuleError(S2SADError):
    """A callee with no derivative rule and no source to differentiate."""


class SourceUnavailableError(S2SADError):
    """The function's source text cannot be read (builtin, `python -c`, REPL)."""


class WrtError(S2SADError, ValueError):
    """`wrt` names no parameter of the function."""


class NonScalarOutputError(S2SADError, ValueError):
    """`grad` was asked for a function whose output is not a scalar."""


class RuleError(S2SADError):
    """A derivative rule is malformed or does not match its target."""


class InputTypeError(S2SADError, TypeError):
    """A differentiated argument has a type that has no gradient (int, bool)."""
