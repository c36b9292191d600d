"""The README's example runs as written and prints what its comments say."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_example_runs_and_prints_its_comments():
    blocks = python_blocks()
    assert blocks, "README has no python example"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for code in blocks:
            exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    printed = out.getvalue().splitlines()
    assert printed[0] == "{'R': 1875.0, 'q': 0.0}"
    assert printed[1] == "(0.2,) True"
    # margins of eq (9) at (alpha, beta) = (0.4, 0.2): closed forms (note 004 eqs 10-12)
    # x = w_z d0 = sqrt((a^2 + sqrt(a^4 + 4 b^2))/2) = 0.54351, PM = atan(a x / b) - x
    assert "phase margin 16.25 deg" in printed[2]
    assert "delay margin 104.3 ms" in printed[2]
    assert printed[3] == "False"
    q_end, q_min = (float(v) for v in re.findall(r"=\s*([-\d.e+]+)", printed[4]))
    assert q_min >= 0.0


def layout_block() -> str:
    text = README.read_text()
    section = text[text.index("## Layout") :]
    block = re.search(r"```\n(.*?)```", section, flags=re.S).group(1)
    return block.split("\npapers/<paper>/")[0]  # the package part of the tree


def test_readme_layout_matches_the_tree():
    # every package and module the layout names exists, and every package and public module of
    # fluidnet is named there
    root = README.parent / "fluidnet"
    block = layout_block()
    named = set(re.findall(r"([a-z_]+(?:\.py|/))", block))
    for name in named:
        if name.endswith("/") and name.rstrip("/") in {
            "fluidnet",
            "papers",
            "notebooks",
            "benchmarks",
            "tests",
        }:
            continue
        hits = list(root.rglob(name.rstrip("/"))) if name.endswith("/") else list(root.rglob(name))
        assert hits, f"the README layout names {name!r}, which is not in fluidnet/"
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if (
            "__pycache__" in rel.parts
            or path.name.startswith("_")
            or path.suffix not in ("", ".py")
        ):
            continue
        if path.is_dir() and rel.parts[0] == "papers" and len(rel.parts) > 1:
            continue  # one package per paper, described as such
        if path.is_dir() or len(rel.parts) == 1 or rel.parts[0] in ("linear", "symbolic"):
            label = path.name + ("/" if path.is_dir() else "")
            assert label in named, f"fluidnet/{rel} is missing from the README layout"
