"""One documentation page per reproduced paper, written from the paper's own files.

Each page is the paper's ``papers/<paper>/README.md`` (what is reproduced, conventions,
misprints), followed by the figures and the target table of the last ``fluidnet reproduce``
run found in ``papers/`` (``make docs`` runs it first on a fresh checkout). The pages are
generated at build time into ``docs/papers/`` and never committed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAPERS = ROOT / "papers"


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else str(value).replace("|", "\\|")


def _targets_table(path: Path) -> list[str]:
    if not path.exists():
        return [
            "No target report here yet: run `make reproduce` (or `fluidnet reproduce`) and "
            "build the documentation again."
        ]
    targets = json.loads(path.read_text())["targets"]
    n_pass = sum(bool(t["passed"]) for t in targets)
    n_mis = sum(bool(t.get("mismatch")) for t in targets)
    lines = [
        f"{n_pass} of {len(targets)} targets pass; {n_mis} are documented mismatches (expected "
        "to fail, with the reason in the last column).",
        "",
        "| item | reference | quantity | paper | fluidnet | tolerance | source | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in targets:
        if t.get("tol") is None:  # text targets (expressions, verdicts) compare exactly
            tol = "exact"
        else:
            tol = f"{t['tol']:.0e}{' rel' if t.get('rel') else ''}"
        if t.get("mismatch"):
            verdict = f"documented mismatch: {_fmt(t['mismatch'])}"
        else:
            verdict = "pass" if t["passed"] else "**FAIL**"
        cells = [t["item"], t["ref"], t["name"], t["expected"], t["value"], tol, t["source"]]
        lines.append("| " + " | ".join(_fmt(c) for c in cells) + f" | {verdict} |")
    return lines


#: The markers of a README's figure pairs (fluidnet.papers.readme.PAIRS_BEGIN / PAIRS_END).
PAIRS_BEGIN = "<!-- figure pairs -->"
PAIRS_END = "<!-- end of figure pairs -->"


def _include(key: str, *options: str) -> list[str]:
    return [
        f"```{{include}} ../../papers/{key}/README.md",
        ":relative-docs: ../",
        ":relative-images:",
        *options,
        "```",
        "",
    ]


def _figure_cell(key: str, name: str) -> str:
    if (PAPERS / key / "figures" / f"{name}.png").exists():
        return f"![{name}](../../papers/{key}/figures/{name}.png)"
    return f"(`{name}.png` appears after `fluidnet reproduce {key}`)"


def _pairs(key: str, text: str) -> list[str]:
    """The README's figure pairs, each packet figure beside its fluid one (a figure that is not
    there yet is named instead: the site builds before every item has run)."""
    section = text.split(PAIRS_BEGIN, 1)[1].split(PAIRS_END, 1)[0]
    lines = []
    for line in section.splitlines():
        found = re.findall(r"!\[[^\]]*\]\(figures/([^)]+)\.png\)", line)
        if len(found) == 2:
            line = "| " + " | ".join(_figure_cell(key, name) for name in found) + " |"
        lines.append(line)
    return [*lines, ""]


def _readme(key: str) -> list[str]:
    """The README, its figure pairs rendered by :func:`_pairs`."""
    text = (PAPERS / key / "README.md").read_text()
    if PAIRS_BEGIN not in text or PAIRS_END not in text:
        return _include(key)
    return [
        *_include(key, f":end-before: {PAIRS_BEGIN}"),
        *_pairs(key, text),
        *_include(key, f":start-after: {PAIRS_END}"),
    ]


def _page(key: str) -> str:
    readme = PAPERS / key / "README.md"
    lines = [*_readme(key), "## Figures of the last run", ""]
    figures = sorted((PAPERS / key / "figures").glob("*.png"))
    if figures:
        for fig in figures:
            lines += [
                f"```{{figure}} ../../papers/{key}/figures/{fig.name}",
                ":width: 90%",
                "",
                f"`{fig.name}`",
                "```",
                "",
            ]
    else:
        lines.append("Figures appear here after `make reproduce`.")
    lines += ["", "## Targets of the last run", "", *_targets_table(PAPERS / key / "targets.json")]
    del readme
    return "\n".join(lines) + "\n"


def paper_keys() -> list[str]:
    """The papers with a README under ``papers/``, in alphabetical order."""
    return sorted(p.parent.name for p in PAPERS.glob("*/README.md"))


def _write(app) -> None:
    target = Path(app.srcdir) / "papers"
    target.mkdir(exist_ok=True)
    keys = paper_keys()
    index = [
        "# Reproduced papers",
        "",
        "`fluidnet reproduce` regenerates the model-based figures and tables of each paper and "
        "checks every number the paper prints (or that follows from its equations) against "
        "fluidnet's value. A number that cannot be reproduced is a *documented mismatch*: it is "
        "reported with its reason and fails the run only if it ever starts matching.",
        "",
    ]
    report = PAPERS / "REPORT.md"
    if report.exists():
        index += [
            "The full target report of the last run is on the page [target report](report.md).",
            "",
        ]
        _replace(target / "report.md", "# Target report\n\n" + report.read_text().split("\n", 1)[1])
    index += ["```{toctree}", ":maxdepth: 1", "", *keys]
    if report.exists():
        index.append("report")
    index += ["```", ""]
    _replace(target / "index.md", "\n".join(index))
    for key in keys:
        _replace(target / f"{key}.md", _page(key))


def _replace(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def setup(app):
    app.connect("config-inited", lambda app, config: _write(app))
    return {"parallel_read_safe": True, "version": "1"}
