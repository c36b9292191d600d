"""Progress bars appear only where someone watches: a terminal or a notebook."""

import io
import sys

from fluidnet import progress
from fluidnet.sweep import sweep


def test_no_bar_in_a_log(monkeypatch):
    err = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stderr", err)
    assert not progress.interactive()
    sweep(lambda a: {"y": a}, {"a": list(range(progress.AUTO_PROGRESS_MIN + 50))})
    assert err.getvalue() == ""


def test_bar_on_a_terminal_and_when_forced(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert progress.interactive()
    with progress.progress_bar(500, None, "work", file=tty, mininterval=0) as bar:
        bar.update(500)
    assert "work" in tty.getvalue()
    # small jobs stay quiet even on a terminal; progress=True forces a bar anywhere
    assert progress.progress_bar(10, None).disable
    assert not progress.progress_bar(10, True, file=io.StringIO()).disable
