"""The teaching notebooks (``notebooks/``) as documentation pages, executed when the site builds.

``make test`` executes the same notebooks (``pytest --nbmake notebooks``); here they are copied
into ``docs/notebooks/`` at build time (never committed) so that MyST-NB renders them with
their outputs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "notebooks"


def _copy(src: Path, dst: Path) -> None:
    if not dst.exists() or dst.read_bytes() != src.read_bytes():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)


def _write(app) -> None:
    target = Path(app.srcdir) / "notebooks"
    wanted = {
        target / path.relative_to(SOURCE)
        for path in SOURCE.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in path.parts
    }
    for path in SOURCE.rglob("*.ipynb"):
        if ".ipynb_checkpoints" not in path.parts:
            _copy(path, target / path.relative_to(SOURCE))
    for stale in target.rglob("*.ipynb"):  # a notebook removed from notebooks/
        if stale not in wanted:
            stale.unlink()


def setup(app):
    app.connect("config-inited", lambda app, config: _write(app))
    return {"parallel_read_safe": True, "version": "1"}
