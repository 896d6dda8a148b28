"""The generated code is deterministic: the same program gives the same
text whatever Python's string hashing (`PYTHONHASHSEED`), so a diff of two
runs shows only what changed in the program, and the on-disk cache is
shared between processes.

Each run compiles, in its own interpreter, generated programs that bind
views, swap names around loops and update in place (where the alias
analysis walks sets of names), and prints a digest of every text; the
digests of two hash seeds must be the same.
"""
import os
import subprocess
import sys
from pathlib import Path

SEEDS = [113, 835, 1, 7, 10, 22, 27, 30, 47, 50, 68, 69, 70, 73]
ROOT = Path(__file__).resolve().parent.parent

_RUN = """
import hashlib, importlib.util, sys, tempfile, warnings
sys.path[:0] = [ROOT, TESTS]
import s2s_ad as ad
from fuzz.generate import generate
from fuzz.program import inspect_params
folder = tempfile.mkdtemp()
for seed in SEEDS:
    prog = generate(seed)
    path = f"{folder}/p{seed}.py"
    open(path, "w").write(prog.source.split("\\nprint(")[0])
    spec = importlib.util.spec_from_file_location(f"p{seed}", path)
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    func = getattr(module, prog.entry)
    wrt = prog.wrt_value(inspect_params(prog.source, prog.entry))
    for mode in ("grad", "jvp"):
        options = {} if wrt is None else {"wrt": wrt}
        if prog.has_aux:
            options["has_aux"] = True
        try:
            text = ad.source(getattr(ad, mode)(func, **options)).replace(folder, "")
        except ad.S2SADError as exc:
            text = str(exc).replace(folder, "")
        print(seed, mode, hashlib.md5(text.encode()).hexdigest())
"""


def _digests(hash_seed: str) -> str:
    code = _RUN.replace("ROOT, TESTS", f"{str(ROOT)!r}, {str(ROOT / 'tests')!r}") \
        .replace("in SEEDS", f"in {SEEDS!r}")
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "S2S_AD_CACHE_DIR": ""}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_generated_code_does_not_depend_on_string_hashing():
    first, second = _digests("1"), _digests("2")
    assert first.count("\n") == 2 * len(SEEDS)
    assert first == second
