"""The reproduction registry: target tables, items, report files, README tables and the command
line."""

import json
from pathlib import Path

import pytest

import fluidnet as fn
from fluidnet.cli import main
from fluidnet.papers import readme, registry
from fluidnet.papers.registry import Context, paper, papers
from fluidnet.papers.targets import RUN, Value, check, claim, equal, identity, near

ROOT = Path(__file__).resolve().parents[1]

TABLE = {
    "good": [
        near("pi", "eq (1)", "pi to 3 digits", 3.142, tol=5e-4),
        near("rel", "eq (2)", "relative", 100.0, rel=0.02, source="derived"),
        equal("count", "Table 1", "count", 3),
        identity("trig", "eq (3)", "identity", "sin(x)**2 + cos(x)**2"),
        claim("claim", "Fig 1", "qualitative claim", "increasing", note="slope {}"),
    ],
    "bad": [near("one", "eq (4)", "off by one", 1.0, tol=0.1, note="known mismatch")],
    "boom": [near("never", "eq (5)", "never computed", 1.0, tol=0.1)],
    "sized": [
        equal("n", "eq (6)", "points computed", 10),
        equal("full", "eq (7)", "needs the full sizes", True, quick=False),
    ],
}


def good(ctx: Context) -> dict:
    fig, ax = ctx.new_figure()
    ax.plot([0, 1], [0, 1])
    ctx.figure("line", fig)
    ctx.table("numbers", [{"a": 1, "b": None}, {"a": 2, "b": 3.5}])
    return {
        "pi": 3.14159,
        "rel": 101.0,
        "count": 3,
        "trig": "1",
        "claim": Value(True, shown="rises", note="0.5"),
    }


def bad(ctx: Context) -> dict:
    return {"one": 2.0}


def boom(ctx: Context) -> dict:
    raise RuntimeError("boom")


def sized(ctx: Context, n: int = 10) -> dict:
    return {"n": n, "full": n == 10}


@pytest.fixture(autouse=True)
def selftest_paper():
    """Register a throw-away paper for the duration of each test."""
    p = paper("zz_selftest", title="registry self-test", citation="none", targets=TABLE)
    p.item(title="targets that pass")(good)
    p.item(title="a failing target")(bad)
    p.item(title="an error")(boom)
    p.item(title="sizes", quick={"n": 3})(sized)
    yield p
    registry._REGISTRY.pop("zz_selftest", None)


def test_papers_discovered_and_every_table_entry_has_its_item():
    reg = papers()
    assert {"rcp", "sbrm", "ye", "ks", "mbo", "classics", "zz_selftest"} <= set(reg)
    for p in reg.values():
        assert list(p.items) == list(p.targets), p.key  # same items, in run order


def test_passing_item_writes_files_and_report(tmp_path):
    report = fn.reproduce("zz_selftest:good", out=tmp_path, progress=False)
    assert report.ok and len(report.targets) == 5
    by_name = {t.name: t for t in report.targets}
    assert by_name["qualitative claim"].value == "rises"
    assert by_name["qualitative claim"].note == "slope 0.5"
    assert by_name["relative"].tol == 0.02 and by_name["relative"].rel
    assert (tmp_path / "zz_selftest" / "figures" / "line.png").stat().st_size > 1000
    csv_text = (tmp_path / "zz_selftest" / "tables" / "numbers.csv").read_text().splitlines()
    assert csv_text == ["a,b", "1,", "2,3.5"]
    md = (tmp_path / "REPORT.md").read_text()
    assert "**5/5 targets pass.**" in md and "pi to 3 digits" in md


def test_failures_and_errors_are_reported(tmp_path):
    report = fn.reproduce("zz_selftest", out=tmp_path, progress=False)
    assert not report.ok
    assert [t.name for t in report.failed] == ["off by one"]
    assert len(report.errors) == 1 and "boom" in report.errors[0]
    data = json.loads((tmp_path / "zz_selftest" / "targets.json").read_text())
    assert len(data["targets"]) == 8  # the item that raised has no targets
    assert "**FAIL**" in (tmp_path / "REPORT.md").read_text()
    # re-running one item replaces only that item's rows
    fn.reproduce("zz_selftest:good", out=tmp_path, progress=False)
    data = json.loads((tmp_path / "zz_selftest" / "targets.json").read_text())
    assert len(data["targets"]) == 8


def test_quick_runs_pass_the_declared_sizes_and_skip_full_only_rows(tmp_path):
    full = fn.reproduce("zz_selftest:sized", out=tmp_path, progress=False)
    assert [(t.name, t.value) for t in full.targets] == [
        ("points computed", 10),
        ("needs the full sizes", True),
    ]
    quick = fn.reproduce("zz_selftest:sized", out=tmp_path, quick=True, progress=False)
    assert [(t.name, t.value, t.passed) for t in quick.targets] == [("points computed", 3, False)]


def test_an_item_must_answer_every_row_and_only_its_rows(tmp_path, selftest_paper):
    selftest_paper.targets["partial"] = [equal("a", "r", "a", 1), equal("b", "r", "b", 2)]

    def partial(ctx):
        return {"a": 1, "c": 3}

    selftest_paper.item(title="partial")(partial)
    report = fn.reproduce("zz_selftest:partial", out=tmp_path, progress=False)
    (err,) = report.errors
    assert "returned no value for target 'b'" in err and "returned 'c'" in err


def test_values_the_run_supplies():
    rows = [
        near("x", "r", "cross-method", RUN, tol=1e-3, note="against the second method"),
        near("y", "r", "Monte Carlo", 2.0, tol=RUN),
        claim("z", "r", "bounded", "<= {}"),
        near("w", "r", "onset ({} ms)", 1.0, tol=0.5),
    ]
    values = {
        "x": Value(1.0005, expected=1.0),
        "y": Value(2.1, tol=0.2),
        "z": Value(True, expected="0.25"),
        "w": Value(1.2, name="90"),
    }
    targets, problems = check("p", "i", rows, values)
    assert not problems
    assert [(t.expected, t.tol, t.passed) for t in targets[:2]] == [
        (1.0, 1e-3, True),
        (2.0, 0.2, True),
    ]
    assert targets[2].expected == "<= 0.25" and targets[3].name == "onset (90 ms)"
    # a row whose number the run supplies needs it, and a table number is not overridden
    _, problems = check("p", "i", rows[:1], {"x": 1.0})
    assert "comes from the run" in problems[0]
    _, problems = check("p", "i", rows[1:2], {"y": Value(2.0, expected=2.0)})
    assert "the table has one" in problems[0]


def test_bad_rows_and_registrations(selftest_paper):
    with pytest.raises(fn.OptionError, match="printed"):
        near("k", "r", "n", 1.0, tol=0, source="guessed")
    with pytest.raises(fn.OptionError, match="exactly one of tol= and rel="):
        near("k", "r", "n", 1.0, tol=0.1, rel=0.1)
    with pytest.raises(fn.OptionError, match="no entry in the paper's target table"):
        selftest_paper.item(title="x")(lambda ctx: {})
    with pytest.raises(fn.OptionError, match="registered twice"):
        selftest_paper.item(title="again")(good)
    selftest_paper.targets["odd"] = []

    def odd(ctx, n=1):
        return {}

    with pytest.raises(fn.OptionError, match="not keyword arguments"):
        selftest_paper.item(title="odd", quick={"m": 2})(odd)
    with pytest.raises(fn.OptionError, match="repeated"):
        paper("zz_dup", "t", "c", targets={"i": [equal("k", "r", "a", 1), equal("k", "r", "b", 2)]})


def test_a_table_entry_without_an_item_is_refused(selftest_paper):
    selftest_paper.targets["orphan"] = [equal("k", "r", "n", 1)]
    with pytest.raises(fn.OptionError, match="no item registered for \\['orphan'\\]"):
        papers()


def test_unknown_names(tmp_path):
    with pytest.raises(KeyError, match="unknown paper"):
        fn.reproduce("nonexistent", out=tmp_path, progress=False)
    with pytest.raises(KeyError, match="no item"):
        fn.reproduce("zz_selftest:nothing", out=tmp_path, progress=False)


def test_non_finite_value_fails():
    (t,), _ = check("p", "i", [near("k", "r", "n", 1.0, tol=1.0)], {"k": float("nan")})
    assert not t.passed


def test_cli_exit_codes(tmp_path, capsys):
    assert main(["reproduce", "zz_selftest:good", "--out", str(tmp_path)]) == 0
    assert main(["reproduce", "zz_selftest:bad", "--out", str(tmp_path)]) == 1
    assert main(["reproduce", "nonexistent", "--out", str(tmp_path)]) == 2
    assert main(["reproduce", "--list"]) == 0
    assert "rcp:linearization" in capsys.readouterr().out


def test_rcp_linearization_targets_pass(tmp_path):
    report = fn.reproduce("rcp:linearization", out=tmp_path, progress=False)
    assert report.ok and len(report.targets) == 10


def test_documented_mismatch_is_strict():
    rows = [
        near("known", "Fig 9", "misread", -0.696, tol=0.001, mismatch="read off a plot"),
        near("stale", "Fig 9", "fixed", 1.0, tol=0.0, mismatch="was wrong once"),
        claim("flag", "Fig 9", "claim", mismatch="the text claims the opposite"),
    ]
    (known, stale, flag), _ = check("p", "i", rows, {"known": -0.7064, "stale": 1.0, "flag": False})
    assert (known.passed, known.ok, known.status) == (False, True, "documented mismatch")
    assert (stale.passed, stale.ok, stale.status) == (True, False, "UNEXPECTED MATCH")
    assert flag.ok


def test_report_with_documented_mismatch(tmp_path, selftest_paper):
    selftest_paper.targets["mixed"] = [
        near("ok", "eq (5)", "ok", 1.0, tol=0.0),
        near("plot", "Fig 2", "misread plot", 0.696, tol=0.001, mismatch="plot reading"),
    ]

    def mixed(ctx):
        return {"ok": 1.0, "plot": 0.706}

    selftest_paper.item(title="mixed")(mixed)
    report = fn.reproduce("zz_selftest:mixed", out=tmp_path, progress=False)
    assert report.ok and len(report.documented_mismatches) == 1
    md = (tmp_path / "REPORT.md").read_text()
    assert "1/2 targets pass, 1 documented mismatches" in md
    assert "| documented mismatch | plot reading" in md
    assert main(["reproduce", "zz_selftest:mixed", "--out", str(tmp_path)]) == 0


# ----------------------------------------------------------------------------- README tables
@pytest.mark.parametrize("key", ["classics", "ks", "mbo", "rcp", "sbrm", "ye"])
def test_readme_target_tables_are_generated_from_the_table(key):
    """papers/<paper>/README.md holds the block written from the paper's table (run
    ``python -m fluidnet.papers.readme`` after changing a table)."""
    p = papers()[key]
    text = (ROOT / "papers" / key / "README.md").read_text(encoding="utf-8")
    assert readme.block(p) in text, f"papers/{key}/README.md: run python -m fluidnet.papers.readme"
    n = sum(len(rows) for rows in p.targets.values())
    assert f"checks {n} targets" in readme.block(p)


def test_readme_block_lists_rows_and_mismatches(selftest_paper):
    selftest_paper.targets["mixed"] = [
        near("plot", "Fig 2", "misread plot", 0.696, tol=0.001, mismatch="plot reading")
    ]

    def mixed(ctx):
        return {}

    selftest_paper.item(title="mixed")(mixed)
    block = readme.block(selftest_paper)
    assert "checks 10 targets (9 printed in the paper, 1 derived" in block
    assert "| `mixed` | Fig 2 | misread plot | 0.696 | plot reading |" in block
    assert "| good | Fig 1 | qualitative claim | increasing |  | printed | slope … |" in block
    assert "needs the full sizes | yes |  | printed | (full run only) |" in block
    text = "# Title\n\nprose\n"
    once = readme.updated(text, selftest_paper)
    assert once.startswith(text) and readme.updated(once, selftest_paper) == once


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
    selftest_paper.targets["interrupted"] = [
        near("x", "eq (7)", "computed before Ctrl-C", 2.0, tol=0)
    ]

    def interrupted(ctx):
        raise KeyboardInterrupt

    selftest_paper.item(title="interrupted")(interrupted)
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


def test_figure_pairs_are_checked_and_shown_side_by_side(tmp_path, selftest_paper):
    # issue 35: a packet figure is shown beside its fluid prediction
    from fluidnet.papers.registry import figure_pair

    table = {
        "fluid_side": [equal("n", "eq (8)", "n", 1)],
        "packet_side": [equal("n", "eq (9)", "n", 1)],
        "forgetful": [equal("n", "eq (10)", "n", 1)],
    }
    p = paper("zz_pairs", title="pairs", citation="none", targets=table)

    def fluid_side(ctx):
        fig, ax = ctx.new_figure()
        ax.plot([0, 1], [1, 0])
        ctx.figure("fluid_queue", fig)
        return {"n": 1}

    def packet_side(ctx):
        fig, ax = ctx.new_figure()
        ax.plot([0, 1], [0, 1])
        ctx.figure("packet_queue", fig)
        return {"n": 1}

    def forgetful(ctx):
        return {"n": 1}

    pair = figure_pair("packet_queue", "fluid_queue", "queues", fluid_item="fluid_side")
    try:
        p.item(title="fluid")(fluid_side)
        p.item(title="packets", pairs=[pair])(packet_side)
        p.item(title="no figure", pairs=[figure_pair("nothing", "fluid_queue", "x")])(forgetful)
        other = paper("zz_pairs_bad", title="bad", citation="none", targets={"bad": []})
        with pytest.raises(fn.OptionError, match="not an item of paper"):
            other.item(title="bad", pairs=[figure_pair("a", "b", "c", fluid_item="zz")])(bad)
        registry._REGISTRY.pop("zz_pairs_bad", None)
        with pytest.raises(fn.OptionError, match="figure name"):
            figure_pair("a.png", "b", "c")
        report = fn.reproduce("zz_pairs", out=tmp_path, progress=False)
        # an item that does not write its pair's figures is an error naming them
        assert report.errors == [
            "zz_pairs:forgetful raised OptionError: zz_pairs:forgetful did not write the "
            "figure(s) ['nothing', 'fluid_queue'] of its figure pair 'nothing'"
        ]
        block = readme.block(p)
        assert readme.PAIRS_BEGIN in block and readme.PAIRS_END in block
        assert "**queues**" in block
        assert (
            "| ![ns-3: packet_queue](figures/packet_queue.png) | "
            "![fluid: fluid_queue](figures/fluid_queue.png) |"
        ) in block
        assert readme.block(selftest_paper).count(readme.PAIRS_BEGIN) == 0  # no pairs: none
    finally:
        registry._REGISTRY.pop("zz_pairs", None)
        registry._REGISTRY.pop("zz_pairs_bad", None)
