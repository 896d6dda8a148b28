"""The alias analysis's table of view relations (normalize/alias_parts.py,
`PartTable`) answers from indexes kept as parts are added, merged, popped,
rebased and copied.  Each answer is checked, after every step of random
sequences of those operations, against a plain scan of every relation:
a stale index would drop a view from a write-back, a silent wrong value."""
import random

import gast
import pytest

from s2s_ad import astutil
from s2s_ad.normalize.alias_parts import Part, PartTable

NAMES = ["a", "b", "c", "d", "e", "i", "j"]


def _part(rng: random.Random) -> Part:
    base = rng.choice(NAMES)
    index = astutil.name(rng.choice(NAMES)) if rng.random() < 0.5 else \
        astutil.const(rng.randrange(3))
    view = astutil.subscript(astutil.name(base), index)
    return Part(base, "index", view, certain=rng.random() < 0.7, item=rng.random() < 0.4)


def _scan_views(mirror: dict, names: set, items: bool) -> list:
    found = [(view, part) for view, parts in mirror.items() for part in parts
             if part.base in names and (part.item or not items)]
    found.sort(key=lambda pair: pair[0])
    return found


def _same_pairs(got: list, want: list) -> bool:
    return [(v, id(p)) for v, p in got] == [(v, id(p)) for v, p in want]


def _check(table: PartTable, mirror: dict) -> None:
    for name in NAMES:
        assert [id(p) for p in table.get(name)] == [id(p) for p in mirror.get(name, [])]
        assert table.is_base(name) == any(p.base == name for ps in mirror.values() for p in ps)
        reading = {id(p) for ps in mirror.values() for p in ps if name in p.reads()}
        assert {id(p) for p in table.reading(name)} == reading
    for names in ({"a"}, {"b", "c"}, set(NAMES)):
        for items in (False, True):
            assert _same_pairs(table.views_of(names, items), _scan_views(mirror, names, items))


def _extend(mirror: dict, name: str, parts) -> None:
    known = mirror.setdefault(name, [])
    for part in parts:
        if part.key not in {p.key for p in known}:
            known.append(part)
    if not known:
        del mirror[name]


@pytest.mark.parametrize("seed", range(40))
def test_the_indexes_answer_as_a_scan_of_every_relation_does(seed):
    rng = random.Random(seed)
    table, mirror = PartTable(), {}
    for _ in range(60):
        op, name = rng.random(), rng.choice(NAMES)
        if op < 0.35:
            part = _part(rng)
            table.add(name, part)
            mirror.setdefault(name, []).append(part)
        elif op < 0.5:          # a loop's carried names share part objects
            shared = list(table.get(rng.choice(NAMES))) + [_part(rng)]
            table.extend(name, shared)
            _extend(mirror, name, shared)
        elif op < 0.65:
            assert [id(p) for p in table.pop(name)] == [id(p) for p in mirror.pop(name, [])]
        elif op < 0.8:
            new = rng.choice([n for n in NAMES if n != name])
            table.rebase(name, new)
            for part in {id(p): p for ps in mirror.values() for p in ps
                         if p.base == name}.values():
                part.rebase(new)
        elif op < 0.9:          # a branch's relations: copies, then the join
            copy = table.copy()
            assert [(n, [p.key for p in ps]) for n, ps in copy.items()] == \
                [(n, [p.key for p in ps]) for n, ps in table.items()]
            assert not {id(p) for ps in copy.values() for p in ps} & \
                {id(p) for ps in mirror.values() for p in ps}
            table, mirror = copy, {n: list(ps) for n, ps in copy.items()}
        else:
            for part in table.reading(name):
                part.certain = False
        _check(table, mirror)


def test_a_rebase_renames_the_base_in_the_view():
    table = PartTable()
    part = Part("x", "index", astutil.subscript(astutil.name("x"), astutil.name("i")))
    table.add("v", part)
    table.rebase("x", "h")
    assert gast.dump(part.view) == gast.dump(
        astutil.subscript(astutil.name("h"), astutil.name("i")))
    assert table.views_of({"h"}) == [("v", part)] and table.views_of({"x"}) == []
    assert not table.is_base("x") and table.is_base("h")
