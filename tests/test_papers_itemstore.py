"""What ``fluidnet reproduce`` keeps between runs (fluidnet.papers.itemstore): an item whose
code, environment and files are unchanged is read back, identically; a change of its code, a
missing or altered file, a damaged record, a failing target or ``reuse=False`` runs it again."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest

import fluidnet as fn
from fluidnet.cli import main
from fluidnet.papers import itemstore, registry
from fluidnet.papers.registry import paper
from fluidnet.papers.targets import equal, near

KEY = "zz_itemstore"
TABLE = {
    "counted": [near("x", "eq (1)", "a number", 2.5, tol=1e-12), equal("n", "eq (2)", "n", 4)],
    "failing": [equal("n", "eq (3)", "a count that is wrong", 5)],
}

SOURCE = """
from pathlib import Path

RUNS = Path({runs!r})


def counted(ctx):
    RUNS.write_text(RUNS.read_text() + "counted\\n" if RUNS.exists() else "counted\\n")
    ctx.table("counted", [{{"x": 2.5}}])
    return {{"x": 2.5, "n": {n}}}


def failing(ctx):
    RUNS.write_text(RUNS.read_text() + "failing\\n" if RUNS.exists() else "failing\\n")
    return {{"n": 4}}
"""


def _register(tmp_path: Path, n: int = 4) -> Path:
    """The items, defined in a module file of their own (so that editing it changes the key)."""
    source = tmp_path / f"zz_items_{n}.py"
    source.write_text(textwrap.dedent(SOURCE.format(runs=str(tmp_path / "runs.txt"), n=n)))
    spec = importlib.util.spec_from_file_location(source.stem, source)
    module = importlib.util.module_from_spec(spec)
    sys.modules[source.stem] = module
    spec.loader.exec_module(module)
    registry._REGISTRY.pop(KEY, None)
    p = paper(KEY, title="item store self-test", citation="none", targets=TABLE)
    p.item(title="counted")(module.counted)
    p.item(title="failing")(module.failing)
    return source


@pytest.fixture(autouse=True)
def _cleanup():
    yield
    registry._REGISTRY.pop(KEY, None)


def _runs(tmp_path: Path) -> list[str]:
    path = tmp_path / "runs.txt"
    return path.read_text().split() if path.exists() else []


def test_an_unchanged_item_is_read_back_identically(tmp_path, capsys):
    _register(tmp_path)
    out = tmp_path / "out"
    first = fn.reproduce(KEY, out=out)
    rows = json.loads((out / KEY / "targets.json").read_text())["targets"]
    second = fn.reproduce(KEY, out=out)
    printed = capsys.readouterr().out
    assert _runs(tmp_path) == ["counted", "failing", "failing"]  # the failing item runs again
    assert f"[{KEY}:counted] 2/2 targets pass, 1 files, reused" in printed
    assert [t.row() for t in second.targets] == [t.row() for t in first.targets]
    assert second.files == first.files
    assert json.loads((out / KEY / "targets.json").read_text())["targets"] == rows
    assert (out / ".cache" / "items" / KEY / "counted.json").is_file()
    assert not (out / ".cache" / "items" / KEY / "failing.json").exists()
    fn.reproduce(KEY, out=out, quick=True)  # a quick run has its own record
    assert _runs(tmp_path)[-2:] == ["counted", "failing"]
    fn.reproduce(f"{KEY}:counted", out=out, reuse=False)
    assert main(["reproduce", f"{KEY}:counted", "--out", str(out), "--rerun"]) == 0
    assert _runs(tmp_path)[-2:] == ["counted", "counted"]


def test_a_change_of_code_or_files_runs_the_item_again(tmp_path):
    source = _register(tmp_path)
    out = tmp_path / "out"
    fn.reproduce(f"{KEY}:counted", out=out, progress=False)
    # the item's own source changes
    source.write_text(source.read_text() + "\n# an edit\n")
    fn.reproduce(f"{KEY}:counted", out=out, progress=False)
    assert _runs(tmp_path) == ["counted"] * 2
    # a file it wrote is altered, then removed
    table = out / KEY / "tables" / "counted.csv"
    table.write_text("x\n3.5\n")
    fn.reproduce(f"{KEY}:counted", out=out, progress=False)
    assert table.read_text().splitlines()[1] == "2.5"
    table.unlink()
    fn.reproduce(f"{KEY}:counted", out=out, progress=False)
    assert _runs(tmp_path) == ["counted"] * 4 and table.exists()
    fn.reproduce(f"{KEY}:counted", out=out, progress=False)
    assert _runs(tmp_path) == ["counted"] * 4


def test_a_damaged_record_is_named_and_the_item_runs_again(tmp_path):
    _register(tmp_path)
    out = tmp_path / "out"
    fn.reproduce(f"{KEY}:counted", out=out, progress=False)
    record = out / ".cache" / "items" / KEY / "counted.json"
    data = json.loads(record.read_text())
    data["body"]["targets"][0][4] = 2.0  # "our value", edited by hand
    record.write_text(json.dumps(data))
    with pytest.warns(RuntimeWarning, match="record of zz_itemstore:counted is damaged"):
        report = fn.reproduce(f"{KEY}:counted", out=out, progress=False)
    assert report.targets[0].value == 2.5 and _runs(tmp_path) == ["counted"] * 2


def test_the_key_covers_the_package_without_the_other_papers(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "papers" / "mine").mkdir(parents=True)
    (pkg / "papers" / "other").mkdir()
    (pkg / "core.py").write_text("x = 1\n")
    (pkg / "papers" / "mine" / "item.py").write_text("y = 1\n")
    (pkg / "papers" / "other" / "item.py").write_text("z = 1\n")
    skip = [pkg / "papers" / "other"]
    before = itemstore._sources(pkg, skip)
    assert set(before) == {"core.py", "papers/mine/item.py"}
    (pkg / "papers" / "other" / "item.py").write_text("z = 2\n")
    assert itemstore._sources(pkg, skip) == before
    (pkg / "core.py").write_text("x = 2\n")
    assert itemstore._sources(pkg, skip)["core.py"] != before["core.py"]
    # and the real key: the environment and the sizes of the run
    item = registry.papers()["rcp"].items["linearization"]
    key = itemstore.item_key(item, quick=False)
    assert key["item"] == "rcp:linearization" and key["outside"] is None
    assert "numpy" in key["environment"]["packages"]
    assert itemstore.item_key(item, quick=True) != key


def test_a_numpy_float_is_recorded_as_the_report_shows_it(tmp_path):
    # tolerances from the run are numpy floats (a float subclass): the report writes them as
    # floats, and so does the record, so the item is read back
    import numpy as np

    from fluidnet.papers.targets import RUN, Value

    table = {"numpyish": [near("x", "eq (1)", "x", 1.0, tol=RUN)]}
    p = paper("zz_numpyish", title="numpy", citation="none", targets=table)

    def numpyish(ctx):
        return {"x": Value(np.float64(1.0), tol=np.float64(0.25))}

    try:
        p.item(title="numpy floats")(numpyish)
        first = fn.reproduce("zz_numpyish", out=tmp_path, progress=False)
        record = tmp_path / ".cache" / "items" / "zz_numpyish" / "numpyish.json"
        assert record.is_file()
        second = fn.reproduce("zz_numpyish", out=tmp_path, progress=False)
        assert [t.row() for t in second.targets] == [t.row() for t in first.targets]
        assert type(second.targets[0].tol) is float
    finally:
        registry._REGISTRY.pop("zz_numpyish", None)
