"""fn.explore in a real browser: JupyterLab and a Voila page, a slider moved by hand.

One JupyterLab server (with Voila's server extension, which serves ``/voila/render/``) is
started on a free localhost port over a notebook that displays ``fn.explore(rcp)``; Chromium,
driven by playwright, opens it as a Voila page and in JupyterLab. There a slider is moved, by
the keyboard on the Voila page and by dragging the mouse in JupyterLab, and the numbers and
both pictures must change; the phase margin shown must be the closed form of RCP's loop gain
cut at ``R``, ``e^{-s d0} (alpha s d0 + beta) / (s d0)^2`` (Dukkipati & McKeown, eq (9)), at
the slider values shown. No page may log a console error or throw.

Wall time about 30-40 s on two loaded cores (server, two kernels, the browser).
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import nbformat
import pytest
from browser_helpers import ConsoleErrors, free_port, launch, require_browser, server

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

NOTEBOOK = """\
import fluidnet as fn
import numpy as np
grid = {"alpha": np.linspace(0.1, 1.6, 9), "beta": np.linspace(0.05, 0.8, 9)}
ex = fn.explore(fn.models.rcp(), ["alpha", "beta"], cut="R", chart=grid)
ex
"""


def rcp_phase_margin(alpha: float, beta: float) -> float:
    """Phase margin (deg) of RCP's loop gain cut at R: |L| = 1 where (w d0)^2 solves
    x^2 - alpha^2 x - beta^2 = 0, and there arg L + 180 deg = atan(alpha w d0 / beta) - w d0."""
    x = (alpha**2 + math.sqrt(alpha**4 + 4 * beta**2)) / 2
    wd = math.sqrt(x)
    return math.degrees(math.atan(alpha * wd / beta) - wd)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    sync_api = require_browser()
    for package in ("jupyterlab", "voila"):
        pytest.importorskip(package, reason=f"the notebooks extra ({package}) is not installed")
    work = tmp_path_factory.mktemp("lab")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(NOTEBOOK)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    for name in ("voila.ipynb", "lab.ipynb"):  # one each: no kernel session shared
        nbformat.write(nb, work / name)
    port = free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    for var in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "IPYTHONDIR"):
        env[var] = str(work / var.lower())  # nothing written to the user's directories
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        f"--ServerApp.root_dir={work}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        f"--LabApp.workspaces_dir={work / 'workspaces'}",
        f"--LabApp.user_settings_dir={work / 'settings'}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # CI runs as root
    base = f"http://127.0.0.1:{port}"
    with server(cmd, f"{base}/api", env=env, cwd=work, log=work / "server.log"):
        with sync_api.sync_playwright() as pw:
            browser = launch(pw)
            try:
                yield browser, base, work
            finally:
                browser.close()


@pytest.fixture
def page(lab, request):
    """A new page (its own browser context), closed afterwards (Voila then stops its kernel);
    its last screenshot is kept in the server's directory (a temporary one) to look at."""
    browser, _, work = lab
    page = browser.new_page(viewport={"width": 1300, "height": 1300})
    yield page
    page.screenshot(path=str(work / f"{request.node.name}.png"), full_page=True)
    page.close()


def _numbers(page) -> dict[str, str]:
    return {
        k: page.inner_text(f".fn-explore-numbers .{k}")
        for k in (
            "fn-verdict",
            "fn-phase-margin",
            "fn-crossover",
            "fn-eq-R",
            "fn-at-alpha",
            "fn-at-beta",
        )
    }


def _pictures(page) -> tuple[str, str, bytes]:
    picture = page.locator("img.fn-explore-picture")
    chart = page.get_attribute("img.fn-explore-chart", "src") or ""
    return picture.get_attribute("src") or "", chart, picture.screenshot()


def _readout(page, name: str) -> float:
    return float(page.inner_text(f".fn-slider-{name} .widget-readout"))


# JupyterLab's dialogs a user answers with its default button before running a cell: the
# kernel died while it started and restarts (jupyter_client's ports can be taken by another
# process between their choice and the kernel's bind; two servers run at once under xdist),
# or no kernel was started yet. Any other dialog fails the test with its text.
ANSWERED_DIALOGS = ("Kernel Restarting", "Select Kernel")


def _answer_dialog(page, log: Path, answered: list[str]) -> None:
    """Accept a dialog of ANSWERED_DIALOGS (recorded in ``answered``); fail on any other."""
    dialog = page.locator(".jp-Dialog")
    if not dialog.count():
        return
    text = dialog.first.inner_text()
    if not any(title in text for title in ANSWERED_DIALOGS):
        raise AssertionError(f"JupyterLab shows a dialog: {text!r}\n{_log_tail(log)}")
    answered.append(text)
    dialog.first.locator(".jp-mod-accept").click()
    page.wait_for_selector(".jp-Dialog", state="detached", timeout=10_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)


def _log_tail(log: Path, lines: int = 40) -> str:
    text = log.read_text(errors="replace").splitlines() if log.exists() else []
    return "server log, last lines:\n" + "\n".join(text[-lines:])


def _run_first_cell(page, log: Path, answered: list[str]) -> None:
    """Shift+Enter in the first cell, again while the kernel has not taken it (the execution
    indicator can say idle before the kernel's connection is ready, and the run is lost)."""
    prompt = page.locator(".jp-Cell").first.locator(".jp-InputPrompt")
    for _ in range(6):
        _answer_dialog(page, log, answered)
        try:
            page.locator(".jp-Cell .jp-InputArea-editor").first.click(timeout=10_000)
        except Exception:
            continue  # a dialog came up in between: answered above on the next round
        page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function(
                "el => /\\[(\\*|\\d+)\\]/.test(el.textContent)",
                arg=prompt.element_handle(),
                timeout=8_000,
            )
            return
        except Exception:
            continue
    raise AssertionError(
        f"JupyterLab did not run the cell: {prompt.inner_text()!r}; dialogs answered: "
        f"{answered}\n{_log_tail(log)}"
    )


def _show_explorer(page, log: Path) -> list[str]:
    """Run the notebook's cell until the explorer's picture shows; a kernel that dies and
    restarts on the way loses the run, which is made again. Returns the dialogs answered."""
    answered: list[str] = []
    for _ in range(3):
        _run_first_cell(page, log, answered)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if page.locator("img.fn-explore-picture[src]").count():
                return answered
            if page.locator(".jp-Dialog").count():
                break  # answered, and the cell run again, on the next round
            page.wait_for_timeout(250)
        else:
            raise AssertionError(f"no explorer shown in 120 s\n{_log_tail(log)}")
    raise AssertionError(f"no explorer shown; dialogs answered: {answered}\n{_log_tail(log)}")


def _wait_for_change(page, before: str) -> None:
    """Until the numbers have changed and are those of the values the sliders show (while
    updates are under way, the numbers are of an earlier position)."""
    page.wait_for_function(
        """old => {
            const q = s => document.querySelector(s)?.textContent;
            if (q('.fn-explore-numbers .fn-phase-margin') === old) return false;
            return ['alpha', 'beta'].every(k => Math.abs(
                parseFloat(q(`.fn-at-${k}`)) - parseFloat(q(`.fn-slider-${k} .widget-readout`))
            ) <= 1e-3 * Math.abs(parseFloat(q(`.fn-at-${k}`))));
        }""",
        arg=before,
        timeout=60_000,
    )


def _check_moved(page, numbers, pictures, name, value_before, tmp):
    value = _readout(page, name)
    assert value != value_before
    after = _numbers(page)
    assert after["fn-phase-margin"] != numbers["fn-phase-margin"]
    assert after["fn-crossover"] != numbers["fn-crossover"]
    assert after["fn-eq-R"] == numbers["fn-eq-R"] == "1875"  # C / N does not move
    src, chart, shot = _pictures(page)
    assert src != pictures[0] and chart != pictures[1]  # new images were sent
    assert shot != pictures[2]  # and they look different
    page.screenshot(path=str(tmp / f"after-{name}.png"), full_page=True)
    return value, after


def test_voila_page_keyboard_moves_alpha(lab, page):
    _, base, work = lab
    errors = ConsoleErrors()
    errors.watch(page)
    page.goto(f"{base}/voila/render/voila.ipynb", timeout=120_000)
    page.wait_for_selector("img.fn-explore-picture[src]", timeout=120_000)
    page.wait_for_function(
        "() => document.querySelector('.fn-explore-numbers .fn-phase-margin')", timeout=60_000
    )
    alpha0, beta0 = _readout(page, "alpha"), _readout(page, "beta")
    assert (alpha0, beta0) == (0.4, 0.2)
    numbers = _numbers(page)
    assert numbers["fn-verdict"] == "stable"
    assert float(numbers["fn-phase-margin"].split()[0]) == pytest.approx(
        rcp_phase_margin(0.4, 0.2), abs=1e-3
    )
    pictures = _pictures(page)
    handle = page.locator(".fn-slider-alpha .noUi-handle")
    handle.focus()
    for _ in range(20):
        page.keyboard.press("ArrowRight")
    _wait_for_change(page, numbers["fn-phase-margin"])
    alpha, after = _check_moved(page, numbers, pictures, "alpha", alpha0, work)
    assert alpha > alpha0
    # the point of these numbers, to 6 digits (the readout shows 4)
    alpha, beta = float(after["fn-at-alpha"]), float(after["fn-at-beta"])
    assert beta == beta0
    shown = float(after["fn-phase-margin"].split()[0])
    assert shown == pytest.approx(rcp_phase_margin(alpha, beta), abs=2e-3)
    assert not errors, errors


def test_jupyterlab_mouse_drags_beta(lab, page):
    _, base, work = lab
    errors = ConsoleErrors()
    errors.watch(page)
    page.goto(f"{base}/lab/tree/lab.ipynb", timeout=120_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
    answered = _show_explorer(page, work / "server.log")
    page.wait_for_function(
        "() => document.querySelector('.fn-explore-numbers .fn-phase-margin')", timeout=60_000
    )
    alpha0, beta0 = _readout(page, "alpha"), _readout(page, "beta")
    numbers = _numbers(page)
    pictures = _pictures(page)
    box = page.locator(".fn-slider-beta .noUi-handle").bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for dx in range(10, 70, 10):  # dragged in steps, as a hand does
        page.mouse.move(x + dx, y)
    page.mouse.up()
    _wait_for_change(page, numbers["fn-phase-margin"])
    beta, after = _check_moved(page, numbers, pictures, "beta", beta0, work)
    assert beta > beta0 and _readout(page, "alpha") == alpha0
    alpha, beta = float(after["fn-at-alpha"]), float(after["fn-at-beta"])
    assert alpha == alpha0
    shown = float(after["fn-phase-margin"].split()[0])
    assert shown == pytest.approx(rcp_phase_margin(alpha, beta), abs=2e-3)
    assert not errors, (errors, answered)
