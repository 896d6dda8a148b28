"""Running one program: the outcome (ok / skipped / refused / wrong /
crash) and a failure signature that groups failures of the same kind.

    ok       everything s2s_ad returned is right
    skipped  the oracle cannot judge: the primal raised or overflowed, or the
             program is not smooth at the point (two finite-difference steps
             disagree)
    refused  s2s_ad raised a located S2SADError (not InternalError): allowed
    wrong    a value, aux or gradient differs, a gradient has the wrong
             type/shape/dtype, or an argument was mutated
    crash    any other exception (also from generated code, SyntaxError,
             InternalError), or a timeout inside s2s_ad
"""
from __future__ import annotations

import copy
import dataclasses
import inspect
import os
import re
import signal
import threading
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

import s2s_ad as ad
from s2s_ad import errors

from . import oracle
from . import orders as other_orders
from .program import Loader, Program, signature_params

OUTCOMES = ("ok", "skipped", "refused", "wrong", "crash")
PRIMAL_TIMEOUT = 3.0     # seconds for a primal call (generated loops are short)
S2SAD_TIMEOUT = 20.0     # seconds for s2s_ad to compile and run the derived function
_INTERNAL = getattr(errors, "InternalError", None)


@dataclass(frozen=True)
class Result:
    outcome: str
    signature: str = ""
    detail: str = ""
    orders: tuple = ()      # (order, outcome, signature, detail) per other order (orders.py)


class _Stop(Exception):
    """Ends a run early with a result."""

    def __init__(self, result: Result):
        super().__init__(result.signature)
        self.result = result


class Timeout(BaseException):
    """A stage ran too long (BaseException: no `except Exception` in s2s_ad
    or the program can swallow it)."""


def run(prog: Program, loader: Loader, orders: tuple = ()) -> Result:
    """Judge what s2s_ad returns for `prog`; once its gradient is right, in
    each of `orders` too (orders.py)."""
    module = None
    try:
        module = _load(prog, loader)
        return _judge(prog, module, orders)
    except _Stop as stop:
        return stop.result
    finally:
        if module is not None:
            loader.unload(module)


def _load(prog: Program, loader: Loader):
    try:
        with _time_limit(PRIMAL_TIMEOUT, "loading the program"):
            module = loader.load(prog.source)
        getattr(module, prog.entry)
        return module
    except Exception as exc:
        raise _Stop(Result("skipped", "invalid program: " + signature(exc))) from None


def _judge(prog: Program, module, orders: tuple = ()) -> Result:
    f = getattr(module, prog.entry)
    with _time_limit(PRIMAL_TIMEOUT, "the primal"):
        out = _primal(prog, f)
    args = copy.deepcopy(list(prog.args))       # the program keeps its own, whatever happens
    before = copy.deepcopy(args)
    try:
        with _time_limit(S2SAD_TIMEOUT, "s2s_ad", crash=True):
            value, aux, grads = _derive(prog, f, out, args)
    except _Stop as stop:
        if stop.result.outcome != "refused" or "jvp" not in orders:
            raise
        # forward mode runs the program anew: where reverse mode refused,
        # its tangent is judged against finite differences directly
        with _time_limit(2 * PRIMAL_TIMEOUT + S2SAD_TIMEOUT, "jvp", crash=True):
            jvp = ("jvp", *_jvp_alone(prog, f, out))
        raise _Stop(dataclasses.replace(stop.result, orders=(jvp,))) from None
    try:
        _check_returned(prog, out, args, before, value, aux, grads)
    except _Stop:
        raise
    except Exception as exc:          # what s2s_ad returned breaks the comparisons
        _wrong("malformed result", signature(exc))
    with _time_limit(2 * PRIMAL_TIMEOUT, "finite differences"):
        dirs, idx = _check_gradient(prog, f, out, grads)
    judged = []
    for order in orders:
        with _time_limit(S2SAD_TIMEOUT, order, crash=True):
            judged.append((order, *other_orders.judge(order, prog, f, out, grads, dirs, idx,
                                                      signature)))
    return Result("ok", orders=tuple(judged))


def _primal(prog: Program, f):
    """The primal's output on copies of the arguments; skip if unusable."""
    try:
        out = oracle.call_primal(f, prog.args)
    except Exception as exc:
        raise _Stop(Result("skipped", "primal raised: " + signature(exc))) from None
    try:
        value = out[0] if prog.has_aux else out
        scalar = np.ndim(value) == 0 or prog.mode == "vjp"
        usable = scalar and oracle.finite(value)
    except Exception:
        usable = False
    if not usable:
        raise _Stop(Result("skipped", "primal output is not a finite scalar (or pair)"))
    return out


def _derive(prog: Program, f, out, args: list):
    """Call s2s_ad as the program says on `args`; (value, aux, gradients)."""
    options = {"has_aux": True} if prog.has_aux else {}
    wrt = prog.wrt_value(signature_params(f))
    if wrt is not None:
        options["wrt"] = wrt
    try:
        derived = getattr(ad, prog.mode)(f, **options)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if prog.mode == "vjp":
                return None, None, _call_vjp(prog, f, derived, out, args)
            res = derived(*args)
    except errors.S2SADError as exc:
        internal = _INTERNAL is not None and isinstance(exc, _INTERNAL)
        raise _Stop(Result("crash" if internal else "refused", signature(exc))) from None
    except Exception as exc:
        raise _Stop(Result("crash", signature(exc), traceback.format_exc())) from None
    return _unpack(prog, res)


def _call_vjp(prog: Program, f, derived, out, args: list):
    ct = prog.cotangent(out)
    if f.__defaults__ or f.__kwdefaults__:
        seed_name = list(inspect.signature(derived).parameters)[-1]
        return derived(*args, **{seed_name: ct})
    return derived(*args, ct)


def _unpack(prog: Program, res):
    try:
        if prog.mode == "grad":
            grads, aux = res if prog.has_aux else (res, None)
            return None, aux, grads
        head, grads = res
        value, aux = head if prog.has_aux else (head, None)
        return value, aux, grads
    except (TypeError, ValueError):
        raise _Stop(Result("wrong", "malformed result", repr(res)[:500])) from None


def _wrong(signature_: str, detail: str = ""):
    raise _Stop(Result("wrong", signature_, detail))


def _check_returned(prog: Program, out, args, before, value, aux, grads):
    """Arguments untouched; value and aux as the primal's; gradients shaped."""
    if not oracle.identical(before, args):
        _wrong("mutated input", "an argument differs after the derived function ran")
    primal_value = out[0] if prog.has_aux else out
    if prog.mode == "value_and_grad" and not oracle.close(value, primal_value):
        _wrong("wrong value", f"expected {primal_value!r}, got {value!r}")
    if prog.has_aux and not oracle.close(aux, out[1]):
        _wrong("wrong aux", f"expected {out[1]!r}, got {aux!r}")
    glist = _grad_list(prog, grads)
    for (name, _), g in zip(prog.wrt, glist):
        problem = oracle.like_problem(g, prog.args[prog.params.index(name)], name)
        if problem:
            _wrong("gradient type: " + _normalize(problem.split(": ", 1)[1]), problem)
    if not oracle.finite(glist):
        if abs(float(_projection(prog, out)(out))) > oracle.TOO_LARGE:
            # (an output of 1e92 has a gradient that may overflow: seed 601132)
            raise _Stop(Result("skipped", "values too large for finite differences"))
        _wrong("non-finite gradient", repr(glist)[:500])


def _grad_list(prog: Program, grads) -> list:
    if not prog.wrt_tuple:
        return [grads]
    if not isinstance(grads, tuple) or len(grads) != len(prog.wrt):
        _wrong("gradient type: not a tuple of one gradient per wrt entry", repr(grads)[:500])
    return list(grads)


def _check_gradient(prog: Program, f, out, grads):
    """<gradient, v> against central differences along a random v."""
    dirs, idx, fds = _differences(prog, f, out)
    exact = oracle.inner(_grad_list(prog, grads), dirs)
    problem = _disagreement(prog, out, exact, fds)
    if problem:
        _wrong("wrong gradient", f"directional derivative: s2s_ad {problem}")
    return dirs, idx


def _differences(prog: Program, f, out):
    """(directions, their argument positions, the central differences of
    the output along them at steps H1 and H2); skipped where those do not
    make a derivative."""
    rng = np.random.default_rng(prog.seed + 13)
    idx = [prog.params.index(name) for name, _ in prog.wrt]
    dirs = [oracle.direction(prog.args[i], rng) for i in idx]
    project = _projection(prog, out)
    try:
        fds = oracle.finite_difference(f, prog.args, idx, dirs, (oracle.H1, oracle.H2), project)
    except oracle.NotSmooth:
        raise _Stop(Result("skipped", "not smooth at the point")) from None
    except Exception as exc:
        raise _Stop(Result("skipped", "primal raised near the point: " + signature(exc))) from None
    if not (np.isfinite(fds[0]) and np.isfinite(fds[1])) or not oracle.agree(*fds):
        raise _Stop(Result("skipped", "not smooth at the point"))
    return dirs, idx, fds


def _disagreement(prog: Program, out, exact: float, fds) -> str:
    """'' if the directional derivative `exact` agrees with the differences
    `fds`, else what they say (skipped where they cannot tell)."""
    fd1, fd2 = fds
    if oracle.agree(exact, fd1) or oracle.agree(exact, fd2):
        return ""
    project = _projection(prog, out)
    if abs(exact - fd1) <= oracle.rounding_noise(project(out), oracle.H1):
        raise _Stop(Result("skipped", "finite differences lose the value's precision"))
    if abs(float(project(out))) > oracle.TOO_LARGE:
        raise _Stop(Result("skipped", "values too large for finite differences"))
    return f"{exact!r}, finite differences {fd1!r} (h={oracle.H1}), {fd2!r} (h={oracle.H2})"


def _jvp_alone(prog: Program, f, out) -> tuple:
    """(outcome, signature, detail) of forward mode for a program reverse
    mode refused: its tangent against the finite differences."""
    try:
        dirs, idx, fds = _differences(prog, f, out)
    except _Stop as stop:
        return stop.result.outcome, stop.result.signature, ""

    def check(got):
        try:
            problem = _disagreement(prog, out, got, fds)
        except _Stop as stop:
            return stop.result.outcome, stop.result.signature, ""
        return ("wrong", "jvp: wrong tangent", f"jvp {problem}") if problem else None
    return other_orders.judge("jvp", prog, f, out, None, dirs, idx, signature, check)


def _projection(prog: Program, out):
    if prog.mode == "vjp":
        ct = prog.cotangent(out)
        return lambda o: oracle.inner(ct, o)
    return lambda o: float(o[0] if prog.has_aux else o)


def signature(exc: BaseException) -> str:
    """`Type: first line of the message [where]`, with numbers and quoted
    names blurred so that one bug gives one signature."""
    text = exc.message if isinstance(exc, errors.S2SADError) else str(exc)
    first = text.strip().splitlines()[0] if text.strip() else ""
    return f"{type(exc).__name__}: {_normalize(first)} [{_where(exc)}]"


def _normalize(text: str) -> str:
    text = re.sub(r"\(<s2s_ad .*?, line \d+\)", "", text)
    text = re.sub(r"\S+\.py:\d+:\d+: ", "", text)
    text = re.sub(r"<[^<>]*>", "<…>", text)
    text = re.sub(r"'[^']*('|$)", "'…'", text)
    text = re.sub(r"(?<![A-Za-z_])\d+", "N", text)
    return text.strip()[:110]


def _where(exc: BaseException) -> str:
    """The innermost frame in generated code, in s2s_ad, or in the program."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        name = frame.filename
        if name.startswith("<s2s_ad"):
            return "generated code"
        if f"{os.sep}s2s_ad{os.sep}" in name:
            return "s2s_ad/" + name.split(f"{os.sep}s2s_ad{os.sep}")[-1]
        if os.path.basename(name).startswith("fuzz_"):
            return "program"
    return "library"


@contextmanager
def _time_limit(seconds: float, stage: str, crash: bool = False):
    """Stop a stage that runs too long: a crash inside s2s_ad, a skip elsewhere.
    (SIGALRM, so only in the main thread; elsewhere there is no limit.)"""
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise Timeout()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except Timeout:
        result = (Result("crash", f"Timeout: {stage} ran longer than {seconds:g} s") if crash
                  else Result("skipped", f"timeout in {stage}"))
        raise _Stop(result) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
