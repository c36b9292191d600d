"""``fluidnet reproduce -j N``: items in worker processes leave the same targets, report and
figures as a serial run; an item's output is printed whole after its line; an item that raises
or kills its worker is reported and the others finish."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

import fluidnet as fn
from fluidnet.cli import main
from fluidnet.papers import registry
from fluidnet.papers.parallel import default_jobs
from fluidnet.papers.registry import Context, paper
from fluidnet.papers.targets import equal, near

KEY = "zz_parallel"
TABLE = {
    "slow": [near("x", "eq (1)", "a number", 2.0, tol=1e-12), equal("n", "eq (2)", "a count", 3)],
    "chatty": [equal("said", "eq (3)", "lines printed", 2)],
    "boom": [equal("never", "eq (4)", "never computed", 1)],
    "crash": [equal("never", "eq (5)", "never computed", 1)],
    "last": [near("y", "eq (6)", "another number", 0.5, tol=1e-12)],
}


def slow(ctx: Context) -> dict:
    time.sleep(0.3)  # finishes after the items started with it
    fig, ax = ctx.new_figure()
    ax.plot([0, 1, 2], [0, 1, 4])
    ctx.figure("slow", fig)
    ctx.table("slow", [{"a": 1.5, "b": 2}])
    return {"x": 2.0, "n": 3}


def chatty(ctx: Context) -> dict:
    print("chatty: first line", flush=True)
    time.sleep(0.2)
    os.write(1, b"chatty: second line, from the file descriptor\n")
    return {"said": 2}


def boom(ctx: Context) -> dict:
    raise RuntimeError("boom on purpose")


def crash(ctx: Context) -> dict:
    print("crash: about to die", flush=True)
    if os.environ.get("ZZ_PARALLEL_IN_WORKER"):
        os.kill(os.getpid(), signal.SIGKILL)
    raise RuntimeError("crash in the serial run")


def last(ctx: Context) -> dict:
    return {"y": 0.5}


@pytest.fixture(autouse=True)
def parallel_paper():
    p = paper(KEY, title="parallel self-test", citation="none", targets=TABLE)
    for f in (slow, chatty, boom, crash, last):
        p.item(title=f.__name__)(f)
    yield p
    registry._REGISTRY.pop(KEY, None)


def _rows(out: Path) -> list[dict]:
    rows = json.loads((out / KEY / "targets.json").read_text())["targets"]
    return rows


def _report(out: Path) -> str:
    return re.sub(r"updated [0-9: -]+", "updated", (out / "REPORT.md").read_text())


def test_a_parallel_run_writes_what_a_serial_run_writes(tmp_path, monkeypatch):
    monkeypatch.setenv("ZZ_PARALLEL_IN_WORKER", "")
    names = [f"{KEY}:{n}" for n in ("slow", "chatty", "last")]
    serial = fn.reproduce(*names, out=tmp_path / "s", progress=False, reuse=False)
    parallel = fn.reproduce(*names, out=tmp_path / "p", progress=False, jobs=3, reuse=False)
    assert serial.ok and parallel.ok
    assert [t.row() for t in parallel.targets] == [t.row() for t in serial.targets]
    assert [p.relative_to(tmp_path / "p") for p in parallel.files] == [
        p.relative_to(tmp_path / "s") for p in serial.files
    ]
    assert _rows(tmp_path / "p") == _rows(tmp_path / "s")
    assert [r["item"] for r in _rows(tmp_path / "p")] == ["slow", "slow", "chatty", "last"]
    assert _report(tmp_path / "p") == _report(tmp_path / "s")
    for name in ("figures/slow.png", "tables/slow.csv"):
        a = (tmp_path / "s" / KEY / name).read_bytes()
        assert (tmp_path / "p" / KEY / name).read_bytes() == a


def test_an_items_output_follows_its_line_whole(tmp_path, capsys):
    fn.reproduce(f"{KEY}:chatty", f"{KEY}:slow", out=tmp_path, jobs=2, reuse=False)
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"[{KEY}:chatty]"))
    assert lines[at + 1 : at + 3] == [
        "chatty: first line",
        "chatty: second line, from the file descriptor",
    ]


def test_an_item_that_fails_or_kills_its_worker_is_reported_and_the_others_finish(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("ZZ_PARALLEL_IN_WORKER", "1")
    report = fn.reproduce(KEY, out=tmp_path, jobs=2, reuse=False)
    out = capsys.readouterr().out
    assert len(report.errors) == 2
    assert "raised RuntimeError: boom on purpose" in report.errors[0]
    assert "worker process was killed by SIGKILL" in report.errors[1]
    assert "crash: about to die" in out  # what it printed before it died
    assert "RuntimeError: boom on purpose" in out  # the traceback, after the item's line
    done = {t.item for t in report.targets if t.passed}
    assert done == {"slow", "chatty", "last"}
    assert {r["item"] for r in _rows(tmp_path)} >= {"slow", "chatty", "last"}


def test_jobs_on_the_command_line(tmp_path, capsys):
    assert main(["reproduce", f"{KEY}:last", "-j", "2", "--out", str(tmp_path)]) == 0
    assert main(["reproduce", f"{KEY}:last", "-j", "auto", "--out", str(tmp_path)]) == 0
    with pytest.raises(SystemExit):
        main(["reproduce", f"{KEY}:last", "-j", "0", "--out", str(tmp_path)])
    assert "at least 1 job" in capsys.readouterr().err
    with pytest.raises(fn.OptionError, match="jobs = 0"):
        fn.reproduce(f"{KEY}:last", out=tmp_path, jobs=0)
    assert default_jobs() >= 1
