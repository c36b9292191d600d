"""Documentation cites papers by author and year and points only to files a user has.

The package, the top-level README, the paper READMEs and the notebooks must not refer to the
project's internal extraction files (the source-paper texts and the notes made from them); labels
of misprints and conventions (M1, M2, ...) used in the SBRM code must be described in
``papers/sbrm/README.md``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: References to internal files: "seed 004", "note 002 §6.6", "shared/notes/002_sbrm.md", and the
#: notes' tags.
INTERNAL = re.compile(r"seed\s*0\d\d|note\s*0\d\d|shared/notes|DERIVED-CHECK|\[RECON\]", re.I)

#: Files that cite the SBRM misprint labels M1, M2, ...
SBRM_SOURCES = (
    "fluidnet/models/single_bit.py",
    "fluidnet/models/reno.py",
    "fluidnet/models/kelly.py",
    "notebooks/sbrm.ipynb",
)


def _package_files() -> list[Path]:
    return sorted(
        p
        for p in (ROOT / "fluidnet").rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and "__numba_cache__" not in p.parts
        and p.suffix not in (".so", ".pyd", ".nbi", ".nbc", ".pyc")
    )


def _documentation_files() -> list[Path]:
    return [
        *_package_files(),
        ROOT / "README.md",
        *sorted((ROOT / "papers").glob("*/README.md")),
        *sorted((ROOT / "notebooks").glob("*.ipynb")),
    ]


def internal_references(text: str) -> list[str]:
    """The lines of ``text`` that refer to an internal extraction file."""
    return [line.strip() for line in text.splitlines() if INTERNAL.search(line)]


def test_pattern_finds_the_forms_it_must_refuse():
    text = (
        "Dukkipati & McKeown (seed 004), eq (8)\n"
        "note 002 §6.6 [DERIVED-CHECK] values\n"
        "see Note 004 §2.8\n"
        "``shared/notes/002_sbrm.md``\n"
        "Zimmermann (2005), Table 6.6.2\n"
        "n_seed = 16; the note of each target\n"
    )
    assert len(internal_references(text)) == 4


def test_no_references_to_internal_files():
    files = _documentation_files()
    assert len(files) > 50, "the package was not found"
    hits = [
        f"{p.relative_to(ROOT)}: {line}"
        for p in files
        for line in internal_references(p.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not hits, "cite the paper by author and year instead:\n" + "\n".join(hits)


def described_labels(readme: str) -> set[int]:
    """Numbers of the labels a README describes as ``**M7**`` or ``**M3–M6**``."""
    out: set[int] = set()
    for lo, hi in re.findall(r"\*\*M(\d+)(?:[–-]M(\d+))?\*\*", readme):
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def cited_labels(text: str) -> set[int]:
    """Numbers of the labels ``M1``, ``M10``, ... cited in ``text``."""
    return {int(n) for n in re.findall(r"\bM(\d+)\b", text)}


def test_label_parsers():
    assert described_labels("* **M1** x\n* **M3–M6** y\n* **M27** z") == {1, 3, 4, 5, 6, 27}
    assert cited_labels("(misprint M1), M10/M2; RTT M-5 NM3") == {1, 2, 10}


def test_every_cited_sbrm_label_is_described_in_the_readme():
    described = described_labels((ROOT / "papers/sbrm/README.md").read_text(encoding="utf-8"))
    sources = [ROOT / p for p in SBRM_SOURCES]
    sources += sorted((ROOT / "fluidnet/papers/sbrm").glob("*.py"))
    missing = {
        f"{p.relative_to(ROOT)}: M{n}"
        for p in sources
        for n in cited_labels(p.read_text(encoding="utf-8"))
        if n not in described
    }
    assert not missing, "describe these labels in papers/sbrm/README.md:\n" + "\n".join(
        sorted(missing)
    )
