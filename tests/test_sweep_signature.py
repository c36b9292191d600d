"""fluidnet.sweep.signature: descriptions and item digests are exact, deterministic across
processes (a fresh interpreter gives the same text), and say what differs."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import sympy

import fluidnet as fn
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


# ------------------------------------------------------------------ code and what it reads
# (issue 33: a changed global or a redefined helper was described as the same task)
SCALE = 1.0


def _scaled(x):
    return x * SCALE


def _helper(x):
    return x + 1


def _calls_helper(x):
    return _helper(x)


def _changed(fn, change):
    """The entries of describe(fn) that differ after ``change()`` (undone afterwards)."""
    before = describe(fn, "task")
    undo = change()
    try:
        after = describe(fn, "task")
    finally:
        undo()
    return differences(after, before)


def _set_global(name, value):
    def change():
        old = globals()[name]
        globals()[name] = value
        return lambda: globals().__setitem__(name, old)

    return change


def test_a_global_the_function_reads_is_part_of_its_description():
    lines = _changed(_scaled, _set_global("SCALE", 2.0))
    assert lines == ["task@test_sweep_signature._scaled.SCALE: 2.0 here, 1.0 in the store"]


def test_a_redefined_helper_changes_the_description():
    def other(x):
        return x + 100

    lines = _changed(_calls_helper, _set_global("_helper", other))
    assert any(line.startswith("task@test_sweep_signature._helper: ") for line in lines), lines


def test_closures_defaults_and_keyword_defaults_are_described():
    def make(k, bias=0.0, *, power=1):
        def f(x, b=bias, *, p=power):
            return (k * x + b) ** p

        return f

    base = describe(make(2.0), "task")
    for other in (make(3.0), make(2.0, bias=1.0), make(2.0, power=2)):
        assert describe(other, "task") != base
    assert describe(make(2.0), "task") == base


class _Gain:
    level = 1.0

    def value(self):
        return self.level


_GAIN = _Gain()


def _times_gain(x):
    return x * _GAIN.value()


def test_the_methods_and_class_attributes_of_your_classes_are_described():
    def redefine():
        old = _Gain.value
        _Gain.value = lambda self: 5.0
        return lambda: setattr(_Gain, "value", old)

    assert any("_Gain.value" in line for line in _changed(_times_gain, redefine))

    def relevel():
        _Gain.level = 2.0
        return lambda: setattr(_Gain, "level", 1.0)

    assert _changed(_times_gain, relevel) == [
        "task@test_sweep_signature._Gain.level: 2.0 here, 1.0 in the store"
    ]


def test_module_attributes_the_code_names_are_described(tmp_path, monkeypatch):
    (tmp_path / "sig_consts.py").write_text("GAIN = 1.0\nOTHER = 5.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import sig_consts

    scope = {"sig_consts": sig_consts, "np": np, "__name__": "sig_user"}
    exec("def f(x):\n    return np.sqrt(x) * sig_consts.GAIN\n", scope)  # noqa: S102
    f = scope["f"]
    d = describe(f, "task")
    assert d["task@sig_consts.GAIN"] == "1.0"
    assert "task@sig_consts.OTHER" not in d  # not named by the code
    assert d["task@sig_user.f.np"].startswith("module numpy (numpy ")  # by version only
    sig_consts.GAIN = 3.0
    assert differences(describe(f, "task"), d) == [
        "task@sig_consts.GAIN: 3.0 here, 1.0 in the store"
    ]


def _even(n):
    return n == 0 or _odd(n - 1)


def _odd(n):
    return n != 0 and _even(n - 1)


def test_recursive_code_is_described_once():
    d = describe(_even, "task")
    assert d["task@test_sweep_signature._even._odd"].endswith(
        "(see task@test_sweep_signature._odd)"
    )
    assert d["task@test_sweep_signature._odd._even"].endswith(
        "(see task@test_sweep_signature._even)"
    )


_LOCK = __import__("threading").Lock()


def _locked(x):
    with _LOCK:
        return x


def test_what_cannot_be_identified_is_refused_with_a_remedy_that_works():
    with pytest.raises(fn.OptionError, match=r"cannot identify task@test_sweep_signature\._lock"):
        describe(_locked, "task")
    _locked.__sweep_ignore__ = ("_LOCK",)  # the remedy the message gives
    try:
        assert "task@test_sweep_signature._locked._LOCK" not in describe(_locked, "task")
    finally:
        del _locked.__sweep_ignore__


_LOG = __import__("logging").getLogger("fluidnet.test.sweep")


def _logs(x):
    _LOG.debug("point %s", x)
    return x


def test_a_logger_is_identified_by_its_name():
    assert "pickle:" in describe(_logs, "task")["task@test_sweep_signature._logs._LOG"]


def test_the_description_of_code_is_the_same_in_a_fresh_interpreter():
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from test_sweep_signature import _times_gain, _even;"
        "from fluidnet.sweep.signature import describe;"
        "print(json.dumps([describe(_times_gain), describe(_even)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(HERE)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "54321", "PATH": "", "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    assert json.loads(out.stdout) == [describe(_times_gain), describe(_even)]


@__import__("functools").lru_cache(maxsize=None)
def _cached_helper(x):
    return x * SCALE


def _calls_cached_helper(x):
    return _cached_helper(x)


def test_a_decorated_helper_is_described_by_the_function_it_wraps():
    lines = _changed(_calls_cached_helper, _set_global("SCALE", 3.0))
    assert lines == ["task@test_sweep_signature._cached_helper.SCALE: 3.0 here, 1.0 in the store"]
