"""fluidnet.sweep.signature: descriptions and item digests are exact, deterministic across
processes (a fresh interpreter gives the same text), and say what differs."""

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sympy

from fluidnet.sweep.signature import SMALL_ARRAY, describe, differences, item_digests

HERE = Path(__file__).parent


@dataclass
class Factory:
    N: int
    gain: float
    cache: dict

    __sweep_ignore__ = ("cache",)


def test_plain_values_are_described_exactly():
    d = describe({"alpha": 0.1 + 0.2, "n": 3, "name": "red", "grid": (1.5, None)}, "call")
    assert d == {
        "call": "dict",
        "call.alpha": "0.30000000000000004",  # repr: every bit of the float
        "call.n": "3",
        "call.name": "'red'",
        "call.grid": "tuple",
        "call.grid[0]": "1.5",
        "call.grid[1]": "None",
    }


def test_arrays_small_by_value_large_by_hash():
    small = describe(np.arange(3.0), "x")
    assert "0.0" in small["x"] and "2.0" in small["x"]
    big = np.arange(SMALL_ARRAY + 1.0)
    text = describe(big, "x")["x"]
    changed = big.copy()
    changed[-1] += 1e-12
    assert text != describe(changed, "x")["x"]
    assert str(big.shape[0]) in text


def test_ignored_attributes_and_sympy():
    a = describe(Factory(10, 0.5, {"anything": 1}), "f")
    b = describe(Factory(10, 0.5, {"other": 2}), "f")
    assert a == b
    assert not any(k.startswith("f.cache") for k in a)
    c = describe(Factory(11, 0.5, {}), "f")
    assert differences(c, a) == ["f.N: 11 here, 10 in the store"]
    x = sympy.Symbol("x")
    assert "x**2" in describe(x**2 + 1, "e")["e"]


def test_differences_are_listed_and_capped():
    here = {f"k{i}": "1" for i in range(10)}
    stored = {f"k{i}": "2" for i in range(10)} | {"gone": "3"}
    lines = differences(here, stored, limit=3)
    assert lines[:3] == [
        "gone: (absent) here, 3 in the store",
        "k0: 1 here, 2 in the store",
        "k1: 1 here, 2 in the store",
    ]
    assert lines[3] == "... and 8 more differences"
    assert differences(here, here) == []


ITEMS = [{"a": 0.5, "b": 1.0}, {"a": 0.5, "b": 1.0 + 2**-52}, (1, "x"), [1.0, 2.0], 7]


def test_item_digests_distinguish_items_and_agree_across_processes():
    d = item_digests(ITEMS)
    assert d.dtype == np.uint64 and len(set(d.tolist())) == len(ITEMS)
    assert np.array_equal(item_digests(ITEMS), d)
    # a fresh interpreter (another hash seed) gives the same digests and descriptions
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from test_sweep_signature import ITEMS, Factory;"
        "from fluidnet.sweep.signature import item_digests, describe;"
        "print(json.dumps([item_digests(ITEMS).tolist(), describe(Factory(3, 0.25, {}), 'f')]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(HERE)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    )
    digests, description = json.loads(out.stdout)
    assert digests == d.tolist()
    assert description == describe(Factory(3, 0.25, {}), "f")
