"""The on-disk cache of generated code (s2s_ad/diskcache.py): a fresh
process loads what an earlier one compiled, and only that; anything that
changed compiles again."""
import json
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import cache, pipeline
from s2s_ad.rules import registry


@pytest.fixture
def builtin_rules():
    """s2s_ad's own rules only, as in a fresh process (other tests register
    rules for local functions, which turn the disk cache off)."""
    with pytest.MonkeyPatch.context() as patch:
        rules, nondiff = registry._BUILTIN
        patch.setattr(registry, "_ADJOINTS", dict(rules))
        patch.setattr(registry, "_NONDIFF", set(nondiff))
        registry._changed()
        yield
    registry._changed()

MODULE = textwrap.dedent("""
    import numpy as np
    import s2s_ad as ad

    SCALE = 0.5

    def act(z):
        return np.tanh(z) * SCALE

    def apply_n(f, x, n):
        for _ in range(n):
            x = f(x)
        return x

    def loss(w, x):
        h = act(x @ w)
        h = apply_n(np.sin, h, 2)
        return np.sum(h ** 2) + 0.1 * np.sum(w * w)
""")

DRIVER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import s2s_ad as ad
    from s2s_ad import pipeline
    sys.path.insert(0, sys.argv[1])
    import model
    fronts = []
    front = pipeline.front
    pipeline.front = lambda *a, **k: fronts.append(a[0].__qualname__) or front(*a, **k)
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    start = time.perf_counter()
    derived = ad.value_and_grad(model.loss)
    value, g = derived(w, x)
    seconds = time.perf_counter() - start
    print(json.dumps({"value": value, "grad": g.tolist(), "compiled": fronts,
                      "source": ad.source(derived), "seconds": seconds}))
""")


def run(tmp_path, cache_dir, module=MODULE):
    (tmp_path / "model.py").write_text(module)
    (tmp_path / "driver.py").write_text(DRIVER)
    env = {**os.environ, "S2S_AD_CACHE_DIR": str(cache_dir)}
    done = subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def entries(cache_dir):
    return sorted(p for p in (cache_dir / "v1").glob("*.json")) if cache_dir.exists() else []


def test_a_fresh_process_loads_what_an_earlier_one_compiled(tmp_path):
    cache_dir = tmp_path / "cache"
    first = run(tmp_path, cache_dir)
    assert "loss" in first["compiled"] and "act" in first["compiled"]
    assert entries(cache_dir), "nothing was written"
    second = run(tmp_path, cache_dir)
    # loss and its callees' pairs loaded; what a function value is called
    # through (`f(x)` in apply_n, here np.sin) is found when the call runs
    assert second["compiled"] == ["call_sin"]
    assert second["value"] == first["value"] and second["grad"] == first["grad"]
    assert second["source"] == first["source"]


def test_a_changed_callee_compiles_again_and_gives_its_own_gradient(tmp_path):
    cache_dir = tmp_path / "cache"
    first = run(tmp_path, cache_dir)
    changed = run(tmp_path, cache_dir, MODULE.replace("np.tanh(z) * SCALE", "np.cos(z) * SCALE"))
    assert "act" in changed["compiled"]
    assert changed["grad"] != first["grad"]
    fresh = run(tmp_path, tmp_path / "other",
                MODULE.replace("np.tanh(z) * SCALE", "np.cos(z) * SCALE"))
    assert np.allclose(changed["grad"], fresh["grad"], rtol=0, atol=0)


def test_a_file_the_cache_did_not_write_is_never_run(tmp_path):
    cache_dir = tmp_path / "cache"
    run(tmp_path, cache_dir)
    marker = tmp_path / "ran"
    for path in entries(cache_dir):
        mac, _, body = path.read_bytes().partition(b"\n")
        entry = json.loads(body)
        entry["text"] = entry["text"].replace(
            "\n", f"\n    open({str(marker)!r}, 'w').close()\n", 1)
        path.write_bytes(mac + b"\n" + json.dumps(entry, sort_keys=True).encode())
    again = run(tmp_path, cache_dir)
    assert not marker.exists()
    assert "loss" in again["compiled"]          # refused, compiled, rewritten
    assert run(tmp_path, cache_dir)["compiled"] == ["call_sin"]


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_files_are_private_and_a_shared_directory_is_not_used(tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    run(tmp_path, cache_dir)
    assert stat.S_IMODE(os.stat(cache_dir).st_mode) & 0o077 == 0
    for path in entries(cache_dir) + [cache_dir / "hmac.key"]:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    assert run(tmp_path, shared)["compiled"]
    assert not (shared / "v1").exists() or not entries(shared)


def test_off_by_environment_or_argument(tmp_path, monkeypatch, builtin_rules):
    def f(x):
        return np.sum(np.sin(x) ** 2)
    monkeypatch.setenv("S2S_AD_CACHE_DIR", "")
    ad.grad(f)(np.ones(3))
    assert not any(tmp_path.iterdir())
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(tmp_path / "c"))
    ad.grad(f, disk_cache=False)(np.ones(3))
    assert entries(tmp_path / "c") == []
    cache.clear()                       # (the first grad(f) is held in memory)
    ad.grad(f)(np.ones(3))
    assert len(entries(tmp_path / "c")) == 1


def test_a_rule_of_the_users_is_part_of_the_key(tmp_path):
    cache_dir = tmp_path / "cache"
    module = MODULE.replace("return np.tanh(z) * SCALE", "return cube(z) * SCALE") + \
        textwrap.dedent("""
        def cube(x):
            return x ** 3

        @ad.adjoint(cube)
        def _cube_rule(z, x):
            d[x] += 3 * d[z] * x ** 2
    """)
    first = run(tmp_path, cache_dir, module)
    assert "act" in first["compiled"] and entries(cache_dir)
    assert run(tmp_path, cache_dir, module)["compiled"] == ["call_sin"]
    wrong = run(tmp_path, cache_dir, module.replace("d[x] += 3 *", "d[x] += 2 *"))
    assert "act" in wrong["compiled"]           # another rule: compiled again
    assert wrong["grad"] != first["grad"]


def _corpus():
    from _helpers_calls import scaled_sin, two_layers   # helpers in another module

    def calls_helpers(x, w):
        return np.sum(two_layers(w, 0.1, w.T, 0.2, x)) + scaled_sin(x[0, 0], 3.0, shift=0.5)
    def mlp(w1, w2, x):
        h = np.tanh(x @ w1)
        return np.mean((h @ w2) ** 2)

    def loop(a, n=3):
        s = 0.0
        for i in range(n):
            s = s + np.sin(a * i) if i % 2 else s - a * a
        return s
    rng = np.random.default_rng(1)
    return [(mlp, (rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((5, 3))), (0, 1)),
            (loop, (0.7,), 0),
            (calls_helpers, (rng.standard_normal((2, 2)), rng.standard_normal((2, 2))), (0, 1)),
            (scaled_sin, (0.3,), 0)]


@pytest.mark.parametrize("case", range(4))
def test_loaded_code_is_the_compiled_code(case, tmp_path, monkeypatch, builtin_rules):
    func, args, wrt = _corpus()[case]
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(tmp_path))
    compiled = ad.value_and_grad(func, wrt=wrt)
    expected = compiled(*args)
    text = ad.source(compiled)
    cache.clear()
    fronts = []
    front = pipeline.front
    monkeypatch.setattr(pipeline, "front", lambda *a, **k: fronts.append(a[0]) or front(*a, **k))
    loaded = ad.value_and_grad(func, wrt=wrt)
    got = loaded(*args)
    assert fronts == [], "compiled again instead of loading"
    assert ad.source(loaded) == text
    np.testing.assert_equal(got[0], expected[0])
    for a, b in zip(got[1] if isinstance(wrt, tuple) else [got[1]],
                    expected[1] if isinstance(wrt, tuple) else [expected[1]]):
        np.testing.assert_array_equal(a, b)
