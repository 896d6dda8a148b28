"""The reverse-mode corpus, run again in forward mode.

Every case of the function corpus (`test_user_programs`, `test_control_flow`,
`test_calls_containers`, `test_function_values`) is differentiated with `s2s_ad.jvp` and checked by
`fdcheck.check_jvp`: the tangent against central finite differences in
random directions, the value against a plain call, arguments and tangents
unmutated, the tangent shaped like the output.
"""
import copy

import pytest

import test_calls_containers as calls
import test_control_flow as control
import test_function_values as values
import test_user_programs as programs
from fdcheck import check_jvp


def _cases():
    out = [(name, f, make_args, wrt) for name, f, make_args, wrt in programs.CASES]
    out += [("values-" + name, f, lambda args=args: copy.deepcopy(args), wrt)
            for name, f, args, wrt in values.CASES]
    groups = [("control", control.CASES)] + [
        (name.lower(), getattr(calls, name)) for name in dir(calls)
        if name.endswith("_CASES") and isinstance(getattr(calls, name), list)]
    for group, cases in groups:
        for case in cases:
            if not isinstance(case, tuple) or not callable(case[0]) or \
                    not isinstance(case[1], list):
                continue
            f, args, *wrt = case
            out.append((f"{group}-{f.__name__}", f, lambda args=args: copy.deepcopy(args),
                        wrt[0] if wrt else 0))
    return out


CASES = _cases()


@pytest.mark.parametrize("name,f,make_args,wrt", CASES, ids=[c[0] for c in CASES])
def test_forward_mode_matches_finite_differences(name, f, make_args, wrt):
    check_jvp(f, make_args(), wrt)
