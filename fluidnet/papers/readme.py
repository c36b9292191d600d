"""The README table of a paper's targets, generated from its target table.

``papers/<paper>/README.md`` ends with a block between the markers :data:`BEGIN` and
:data:`END`: the targets per item, the documented mismatches with their reasons, and every
target with the paper's value, tolerance, source and note. It is written from
``fluidnet/papers/<paper>/targets.py`` and never by hand::

    python -m fluidnet.papers.readme            # rewrite the blocks of every paper
    python -m fluidnet.papers.readme --check    # exit 1 if a block is out of date

The tests check that every block is current.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .registry import FigurePair, Paper, papers
from .report import fmt, markdown_row, tolerance
from .targets import RUN, TargetRow

__all__ = ["BEGIN", "END", "PAIRS_BEGIN", "PAIRS_END", "block", "pairs", "pairs_section", "updated"]

BEGIN = "<!-- targets: generated from fluidnet/papers/{key}/targets.py; do not edit -->"
END = "<!-- end of generated targets -->"
#: The figure pairs' section inside the block (the documentation renders it on its own).
PAIRS_BEGIN = "<!-- figure pairs -->"
PAIRS_END = "<!-- end of figure pairs -->"


def _expected(row: TargetRow) -> str:
    if row.expected is RUN:
        return "(computed in the run)"
    if row.kind == "near":
        return fmt(float(row.expected))
    if row.kind == "identity":
        import sympy

        return str(sympy.sympify(row.expected))
    if row.kind == "claim":
        return row.expected.replace("{}", "…")
    return fmt(row.expected)


def _note(row: TargetRow) -> str:
    return row.note.replace("{}", "…")


def pairs(p: Paper) -> list[tuple[str, FigurePair]]:
    """``(item, pair)`` for every figure pair of paper ``p``'s items, in the items' order."""
    return [(name, pair) for name, it in p.items.items() for pair in it.pairs]


def pairs_section(p: Paper) -> list[str]:
    """The Markdown of the paper's figure pairs (empty without pairs): per pair its caption
    and a two-column table, the packet figure beside the fluid one (``figures/<name>.png``,
    written by ``fluidnet reproduce``)."""
    found = pairs(p)
    if not found:
        return []
    lines = [
        PAIRS_BEGIN,
        "## Packet figures beside their fluid predictions",
        "",
        "Each ns-3 figure next to the fluid model's prediction it tests (the images are the "
        f"`figures/` of `fluidnet reproduce {p.key}`).",
        "",
    ]
    for item, pair in found:
        fluid_item = pair.fluid_item or item
        lines += [
            f"**{pair.caption}**",
            "",
            markdown_row(
                [
                    f"ns-3: `{pair.packet}.png` (item `{item}`)",
                    f"fluid: `{pair.fluid}.png` (item `{fluid_item}`)",
                ]
            ),
            "|---|---|",
            markdown_row(
                [
                    f"![ns-3: {pair.packet}](figures/{pair.packet}.png)",
                    f"![fluid: {pair.fluid}](figures/{pair.fluid}.png)",
                ]
            ),
            "",
        ]
    return [*lines, PAIRS_END, ""]


def block(p: Paper) -> str:
    """The generated Markdown block of paper ``p`` (markers included)."""
    rows = [(item, r) for item in p.items for r in p.targets[item]]
    mismatches = [(item, r) for item, r in rows if r.mismatch]
    printed = sum(r.source == "printed" for _, r in rows)
    quick = sum(r.quick for _, r in rows)
    n_mis = len(mismatches)
    mis = (
        "1 of them a documented mismatch"
        if n_mis == 1
        else f"{n_mis} of them documented mismatches"
    )
    lines = [
        BEGIN.format(key=p.key),
        *pairs_section(p),
        "## Targets",
        "",
        f"`fluidnet reproduce {p.key}` checks {len(rows)} targets ({printed} printed in the "
        f"paper, {len(rows) - printed} derived from its equations independently of fluidnet), "
        f"{mis}; the quick run of the tests checks {quick}. Written from "
        f"`fluidnet/papers/{p.key}/targets.py` by `python -m fluidnet.papers.readme`; "
        "`papers/REPORT.md` adds our values and verdicts.",
        "",
        "| item | what | targets | printed | derived | documented mismatches |",
        "|---|---|---|---|---|---|",
    ]
    for item, it in p.items.items():
        own = p.targets[item]
        n_printed = sum(r.source == "printed" for r in own)
        n_mis = sum(bool(r.mismatch) for r in own)
        cells = [f"`{item}`", it.title, len(own), n_printed, len(own) - n_printed, n_mis]
        lines.append(markdown_row(cells))
    if mismatches:
        lines += [
            "",
            "Documented mismatches (each fails the run if it ever matches):",
            "",
            "| item | where | target | paper | why it cannot match |",
            "|---|---|---|---|---|",
        ]
        for item, r in mismatches:
            lines.append(markdown_row([f"`{item}`", r.ref, r.name, _expected(r), r.mismatch]))
    lines += [
        "",
        f"<details><summary>All {len(rows)} targets</summary>",
        "",
        "| item | where | target | paper | tolerance | source | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for item, r in rows:
        note = _note(r) + ("" if r.quick else (" " if r.note else "") + "(full run only)")
        tol = "(from the run)" if r.tol is RUN else tolerance(r.tol, r.rel)
        cells = [item, r.ref, r.name.replace("{}", "…"), _expected(r), tol, r.source, note]
        lines.append(markdown_row(cells))
    lines += ["", "</details>", END]
    return "\n".join(lines)


def updated(text: str, p: Paper) -> str:
    """``text`` (a README) with its generated block replaced, or appended if it has none."""
    begin = BEGIN.format(key=p.key)
    if begin in text and END in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(END, 1)[1]
        return head + block(p) + tail
    return text.rstrip("\n") + "\n\n" + block(p) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or ``--check``) the generated block of every paper's README."""
    ap = argparse.ArgumentParser(prog="python -m fluidnet.papers.readme", description=__doc__)
    ap.add_argument("--root", default=".", help="the repository (holds papers/<paper>/README.md)")
    ap.add_argument("--check", action="store_true", help="only report out-of-date blocks")
    args = ap.parse_args(argv)
    stale = []
    for key, p in papers().items():
        path = Path(args.root) / "papers" / key / "README.md"
        text = path.read_text(encoding="utf-8")
        new = updated(text, p)
        if new != text:
            stale.append(str(path))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "out of date" if args.check else "rewritten"
    for s in stale:
        print(f"{s}: {verb}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
