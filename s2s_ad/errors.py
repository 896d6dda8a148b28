"""Errors raised by s2s_ad.

Invariant: every error about user code is an `S2SADError` that carries the
file, line and column of the offending construct, the source line itself, and
a sentence saying what to do about it.  `str(err)` renders all of that, so a
CLI or a test can show it as is.  `InternalError` is the one error about
s2s_ad itself: it still names the user's function, and carries the code
s2s_ad generated for it.
"""
from __future__ import annotations

import linecache
import os
import sys
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


def caller_location() -> Location | None:
    """Where user code called into s2s_ad (the innermost frame outside the
    package), for errors about a call rather than about a function's source:
    a builtin given to `grad`, a `wrt` that names no parameter's kind."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    if frame is None:
        return None
    text = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    return Location(frame.f_code.co_filename, frame.f_lineno, 0, text.strip())


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def again(message: str, generated_line: str) -> str:
    """The message of a refusal met in code s2s_ad derived, differentiated
    again (second order): told at the user's function, the line quoted."""
    return (f"s2s_ad cannot differentiate this derivative again: {message} "
            f"(in its code: `{generated_line.strip()}`)")


def location_of(func) -> Location:
    """Where the Python function `func` is defined (its first line)."""
    code = func.__code__
    text = linecache.getline(code.co_filename, code.co_firstlineno)
    return Location(code.co_filename, code.co_firstlineno, 0, text.rstrip("\n"))


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


class SeedError(S2SADError, ValueError):
    """A `vjp` seed that does not match the function's output."""


class InputTypeError(S2SADError, TypeError):
    """A differentiated argument has a type that has no gradient (int, bool)."""


class UnsupportedValueError(S2SADError, TypeError):
    """A value s2s_ad does not differentiate, found at run time or where
    the value is written: complex numbers (a complex literal or
    complex-making call on the gradient's path, or a gradient that comes out
    complex at run time), and values where a rule's derivative does not
    exist or is not unique (a rank-deficient `lstsq` matrix, the complement
    of `svd(full_matrices=True)`, a `pad` mode computing statistics)."""


class GradientCheckError(S2SADError, AssertionError):
    """`check_grads` found s2s_ad's gradient and central finite differences
    apart in one random direction.  Besides the message, it carries the
    numbers: `argument` (the parameter's name), `direction` (1-based, as the
    message counts), `exact` (s2s_ad's <grad, v>), `approx` (the finite
    differences), `abs_error` and `rel_error`."""

    def __init__(self, message: str, location: Location | None = None,
                 hint: str = "", *, argument: str = "", direction: int = 0,
                 exact: float = float("nan"), approx: float = float("nan"),
                 abs_error: float = float("nan"), rel_error: float = float("nan")):
        self.argument, self.direction = argument, direction
        self.exact, self.approx = exact, approx
        self.abs_error, self.rel_error = abs_error, rel_error
        super().__init__(message, location, hint)


class InternalError(S2SADError):
    """A bug in s2s_ad: the compiler failed, or generated code that does not
    compile, on the function at `location`.  `generated` holds the generated
    source when there is one, so that a bug report can include it."""

    def __init__(self, message: str, location: Location | None = None,
                 hint: str = "", generated: str = ""):
        self.generated = generated
        super().__init__(message, location, hint or (
            "this is a bug in s2s_ad, not in your code: please report it with "
            "this message; meanwhile wrap the failing part in stop_gradient(...) "
            "or register a rule for it with s2s_ad.adjoint"))

    def _render(self) -> str:
        text = super()._render()
        if self.generated:
            numbered = "".join(f"{i:4d}  {line}\n" for i, line in
                               enumerate(self.generated.splitlines(), 1))
            text += "\n  generated code:\n" + numbered.rstrip("\n")
        return text
