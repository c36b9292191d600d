"""Progress bars that appear only where someone is watching: a terminal or a notebook."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["progress_bar", "interactive", "AUTO_PROGRESS_MIN"]

#: With ``progress=None`` a bar is shown for this many items or more (on an interactive output).
AUTO_PROGRESS_MIN = 200


def interactive() -> bool:
    """Whether progress output has a reader: stderr is a terminal, or we run in a notebook.

    A log file or a CI job gets no bar (thousands of carriage-return updates are noise there).
    """
    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):
        pass
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def progress_bar(
    total: int,
    progress: bool | None,
    desc: str | None = None,
    *,
    min_items: int = AUTO_PROGRESS_MIN,
    **kwargs: Any,
):
    """A tqdm bar over ``total`` items.

    ``progress=None`` shows it for ``min_items`` items or more when the output is
    :func:`interactive`; ``True`` forces it on, ``False`` off. Other keywords go to tqdm.
    """
    from tqdm.auto import tqdm

    show = (total >= min_items and interactive()) if progress is None else bool(progress)
    kwargs.setdefault("leave", False)
    return tqdm(total=total, desc=desc, disable=not show, **kwargs)
