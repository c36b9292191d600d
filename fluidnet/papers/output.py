"""Where a paper item writes: figures and tables under ``<out>/<paper>/``, never through a link.

Every file is written through a new file renamed over the old one (a symbolic link is
replaced, never followed), and a directory that is a link is refused.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import OptionError

__all__ = ["Context"]


class Context:
    """What a paper item receives: where its figures and tables go.

    Attributes
    ----------
    paper, item : str
    out : pathlib.Path
        The output root; the paper writes under ``<out>/<paper>/``.
    files : list of pathlib.Path
        The files written so far.
    """

    def __init__(self, paper: str, item: str, out: Path):
        self.paper = paper
        self.item = item
        self.out = Path(out)
        self.outdir = self.out / paper
        self.files: list[Path] = []

    @property
    def figures_dir(self) -> Path:
        return output_dir(self.out, self.paper, "figures")

    @property
    def tables_dir(self) -> Path:
        return output_dir(self.out, self.paper, "tables")

    def new_figure(self, nrows: int = 1, ncols: int = 1, **kw):
        """A matplotlib ``(Figure, axes)`` pair that does not touch pyplot's global state."""
        from matplotlib.figure import Figure

        kw.setdefault("figsize", (6.4 * ncols, 4.2 * nrows))
        fig = Figure(**{k: v for k, v in kw.items() if k in ("figsize", "dpi")})
        axes = fig.subplots(nrows, ncols, squeeze=True)
        return fig, axes

    def figure(self, name: str, fig, dpi: int = 110) -> Path:
        """Save ``fig`` as ``figures/<name>.png`` and return its path."""
        path = self.figures_dir / f"{_file_name(name)}.png"
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
        write_file(path, buffer.getvalue())
        try:  # release pyplot-managed figures too
            import matplotlib.pyplot as plt

            plt.close(fig)
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
        self.files.append(path)
        return path

    def table(
        self, name: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None
    ) -> Path:
        """Write ``rows`` (dicts) to ``tables/<name>.csv`` (``None`` → empty cell)."""
        rows = list(rows)
        cols = list(columns) if columns is not None else list(rows[0]) if rows else []
        path = self.tables_dir / f"{_file_name(name)}.csv"
        fh = io.StringIO(newline="")
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="raise")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})
        write_file(path, fh.getvalue().encode())
        self.files.append(path)
        return path


def output_dir(root: Path, *parts: str) -> Path:
    """``root/parts...``, created as needed; refuses a part that is a symbolic link (or not a
    directory), so that nothing is written outside ``root`` through a link planted in it."""
    d = Path(root)
    d.mkdir(parents=True, exist_ok=True)
    for part in parts:
        d = d / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(d)
        st = os.lstat(d)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise OptionError(
                f"output directory {d} is a symbolic link or not a directory: fluidnet "
                f"reproduce writes only inside {root} and does not follow links; remove it"
            )
    return d


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a new file renamed over it: a link at ``path`` is
    replaced, never followed."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()  # read once, at import (setting it later would race with other threads)


def _file_name(name: str) -> str:
    """A figure or table name as one file name (no directories, no leading dot)."""
    if not name or "/" in name or "\\" in name or name.startswith(".") or "\0" in name:
        raise OptionError(f"output name {name!r} must be a plain file name")
    return name


def read_regular(path: Path) -> str | None:
    """The text of ``path`` if it is a regular file (not a link), else ``None``."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return path.read_text()


def lstat_mode(path: Path) -> int:
    """``st_mode`` of ``path`` itself (not followed), 0 when it does not exist."""
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0
