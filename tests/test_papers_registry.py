"""The reproduction registry, report files and the command line."""

import json

import pytest

import fluidnet as fn
from fluidnet.cli import main
from fluidnet.papers import registry
from fluidnet.papers.registry import Context, paper, papers


def _good(ctx: Context) -> None:
    ctx.check("eq (1)", "pi to 3 digits", 3.142, 3.14159, tol=5e-4)
    ctx.check("eq (2)", "relative", 100.0, 101.0, tol=0.02, rel=True, source="derived")
    ctx.check_equal("Table 1", "count", 3, 3)
    ctx.check_expr("eq (3)", "identity", "sin(x)**2 + cos(x)**2", "1")
    ctx.check_true("Fig 1", "qualitative claim", True, expected="increasing")
    fig, ax = ctx.new_figure()
    ax.plot([0, 1], [0, 1])
    ctx.figure("line", fig)
    ctx.table("numbers", [{"a": 1, "b": None}, {"a": 2, "b": 3.5}])


def _bad(ctx: Context) -> None:
    ctx.check("eq (4)", "off by one", 1.0, 2.0, tol=0.1, note="known mismatch")
    raise RuntimeError("boom")


@pytest.fixture(autouse=True)
def selftest_paper():
    """Register a throw-away paper for the duration of each test."""
    p = paper("zz_selftest", title="registry self-test", citation="none")
    p.item("good", title="targets that pass")(_good)
    p.item("bad", title="a failing target and an error")(_bad)
    yield p
    registry._REGISTRY.pop("zz_selftest", None)


def test_papers_discovered():
    reg = papers()
    assert "rcp" in reg and "zz_selftest" in reg


def test_passing_item_writes_files_and_report(tmp_path):
    report = fn.reproduce("zz_selftest:good", out=tmp_path, progress=False)
    assert report.ok and len(report.targets) == 5
    assert (tmp_path / "zz_selftest" / "figures" / "line.png").stat().st_size > 1000
    csv_text = (tmp_path / "zz_selftest" / "tables" / "numbers.csv").read_text().splitlines()
    assert csv_text == ["a,b", "1,", "2,3.5"]
    md = (tmp_path / "REPORT.md").read_text()
    assert "**5/5 targets pass.**" in md and "pi to 3 digits" in md


def test_failures_and_errors_are_reported(tmp_path):
    report = fn.reproduce("zz_selftest", out=tmp_path, progress=False)
    assert not report.ok
    assert [t.name for t in report.failed] == ["off by one"]
    assert report.errors and "boom" in report.errors[0]
    data = json.loads((tmp_path / "zz_selftest" / "targets.json").read_text())
    assert len(data["targets"]) == 6
    assert "**FAIL**" in (tmp_path / "REPORT.md").read_text()
    # re-running one item replaces only that item's rows
    fn.reproduce("zz_selftest:good", out=tmp_path, progress=False)
    data = json.loads((tmp_path / "zz_selftest" / "targets.json").read_text())
    assert len(data["targets"]) == 6


def test_bad_source_and_unknown_names(tmp_path):
    ctx = Context("x", "y", tmp_path)
    with pytest.raises(ValueError, match="printed"):
        ctx.check("r", "n", 1.0, 1.0, tol=0, source="guessed")
    with pytest.raises(KeyError, match="unknown paper"):
        fn.reproduce("nonexistent", out=tmp_path, progress=False)
    with pytest.raises(KeyError, match="no item"):
        fn.reproduce("zz_selftest:nothing", out=tmp_path, progress=False)


def test_non_finite_value_fails(tmp_path):
    ctx = Context("x", "y", tmp_path)
    assert not ctx.check("r", "n", 1.0, float("nan"), tol=1.0).passed


def test_cli_exit_codes(tmp_path, capsys):
    assert main(["reproduce", "zz_selftest:good", "--out", str(tmp_path)]) == 0
    assert main(["reproduce", "zz_selftest:bad", "--out", str(tmp_path)]) == 1
    assert main(["reproduce", "nonexistent", "--out", str(tmp_path)]) == 2
    assert main(["reproduce", "--list"]) == 0
    assert "rcp:linearization" in capsys.readouterr().out


def test_rcp_linearization_targets_pass(tmp_path):
    report = fn.reproduce("rcp:linearization", out=tmp_path, progress=False)
    assert report.ok and len(report.targets) >= 10


def test_documented_mismatch_is_strict(tmp_path):
    ctx = Context("x", "y", tmp_path)
    known = ctx.check("Fig 9", "misread", -0.696, -0.7064, tol=0.001, mismatch="read off a plot")
    assert (known.passed, known.ok, known.status) == (False, True, "documented mismatch")
    stale = ctx.check("Fig 9", "fixed", 1.0, 1.0, tol=0.0, mismatch="was wrong once")
    assert (stale.passed, stale.ok, stale.status) == (True, False, "UNEXPECTED MATCH")
    flag = ctx.check_true("Fig 9", "claim", False, mismatch="the text claims the opposite")
    assert flag.ok


def test_report_with_documented_mismatch(tmp_path, selftest_paper):
    def item(ctx):
        ctx.check("eq (5)", "ok", 1.0, 1.0, tol=0.0)
        ctx.check("Fig 2", "misread plot", 0.696, 0.706, tol=0.001, mismatch="plot reading")

    selftest_paper.item("mixed")(item)
    report = fn.reproduce("zz_selftest:mixed", out=tmp_path, progress=False)
    assert report.ok and len(report.documented_mismatches) == 1
    md = (tmp_path / "REPORT.md").read_text()
    assert "1/2 targets pass, 1 documented mismatches" in md
    assert "| documented mismatch | plot reading" in md
    assert main(["reproduce", "zz_selftest:mixed", "--out", str(tmp_path)]) == 0


# ----------------------------------------------------------------------------- file safety
def test_links_in_the_output_are_replaced_not_followed(tmp_path):
    out = tmp_path / "out"
    (out / "zz_selftest" / "figures").mkdir(parents=True)
    victims = {name: tmp_path / f"victim-{name}.txt" for name in ("report", "targets", "figure")}
    for v in victims.values():
        v.write_text("precious")
    (out / "REPORT.md").symlink_to(victims["report"])
    (out / "zz_selftest" / "targets.json").symlink_to(victims["targets"])
    (out / "zz_selftest" / "figures" / "line.png").symlink_to(victims["figure"])
    report = fn.reproduce("zz_selftest:good", out=out, progress=False)
    assert report.ok
    assert all(v.read_text() == "precious" for v in victims.values())
    for f in ("REPORT.md", "zz_selftest/targets.json", "zz_selftest/figures/line.png"):
        assert not (out / f).is_symlink() and (out / f).stat().st_size > 100
    assert "**5/5 targets pass.**" in (out / "REPORT.md").read_text()


def test_a_linked_paper_directory_is_refused(tmp_path, capsys):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "zz_selftest").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(fn.OptionError, match="zz_selftest is a symbolic link"):
        fn.reproduce("zz_selftest:good", out=out, progress=False)
    assert main(["reproduce", "zz_selftest:good", "--out", str(out)]) == 2
    assert "does not follow links" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []


def test_report_holds_only_registered_papers_and_items(tmp_path):
    fn.reproduce("zz_selftest:good", out=tmp_path, progress=False)
    row = json.loads((tmp_path / "zz_selftest" / "targets.json").read_text())["targets"][0]
    (tmp_path / "evil").mkdir()
    forged = {**row, "paper": "evil", "name": "forged target", "item": "good"}
    (tmp_path / "evil" / "targets.json").write_text(
        json.dumps({"updated": "now", "targets": [forged]})
    )
    data = json.loads((tmp_path / "zz_selftest" / "targets.json").read_text())
    data["targets"].append({**row, "item": "ghost", "name": "injected row"})
    (tmp_path / "zz_selftest" / "targets.json").write_text(json.dumps(data))
    fn.reproduce("zz_selftest:good", out=tmp_path, progress=False)
    md = (tmp_path / "REPORT.md").read_text()
    assert "forged target" not in md and "evil" not in md and "injected row" not in md
    assert "**5/5 targets pass.**" in md
    kept = json.loads((tmp_path / "zz_selftest" / "targets.json").read_text())["targets"]
    assert {r["item"] for r in kept} == {"good"}


def test_an_interrupted_run_keeps_finished_items_and_writes_no_partial_file(
    tmp_path, selftest_paper
):
    def interrupted(ctx):
        ctx.check("eq (7)", "computed before Ctrl-C", 2.0, 2.0, tol=0.0)
        raise KeyboardInterrupt

    selftest_paper.item("interrupted")(interrupted)
    with pytest.raises(KeyboardInterrupt):
        fn.reproduce("zz_selftest:good", "zz_selftest:interrupted", out=tmp_path, progress=False)
    data = json.loads((tmp_path / "zz_selftest" / "targets.json").read_text())
    assert {r["item"] for r in data["targets"]} == {"good"}  # nothing of the unfinished item
    assert len(data["targets"]) == 5
    assert "**5/5 targets pass.**" in (tmp_path / "REPORT.md").read_text()
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.parametrize(
    "content, why",
    [
        ('{"updated": "x", "targets": [{"paper": "zz_selftest"', "not valid JSON"),
        (b"\xff\xfe\x00garbage", "not text"),
        ('{"rows": []}', "no list 'targets'"),
        ('{"targets": [{"ref": "eq (1)"}]}', "row 0 is not a target"),
    ],
)
def test_a_corrupt_targets_file_is_named_before_any_work(tmp_path, capsys, content, why):
    path = tmp_path / "zz_selftest" / "targets.json"
    path.parent.mkdir()
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(fn.StoreError, match=why) as info:
        fn.reproduce("zz_selftest:good", out=tmp_path, progress=False)
    assert str(path) in str(info.value)
    assert not (tmp_path / "zz_selftest" / "figures").exists()  # refused before running
    assert main(["reproduce", "zz_selftest:good", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"fluidnet reproduce: {path}:" in err and why in err and "Traceback" not in err


def test_a_foreign_targets_file_is_refused(tmp_path):
    fn.reproduce("zz_selftest:good", out=tmp_path, progress=False)
    theirs = tmp_path / "zz_selftest" / "targets.json"
    data = json.loads(theirs.read_text())
    data["targets"][0]["paper"] = "rcp"
    theirs.write_text(json.dumps(data))
    with pytest.raises(fn.StoreError, match="row 0 belongs to paper 'rcp', not 'zz_selftest'"):
        fn.reproduce("zz_selftest:good", out=tmp_path, progress=False)
    # a corrupt file in a directory that is not a paper of the registry is never read
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "targets.json").write_text("[1, 2")
    theirs.unlink()
    assert fn.reproduce("zz_selftest:good", out=tmp_path, progress=False).ok
    assert "other" not in (tmp_path / "REPORT.md").read_text()
