"""The built documentation site in a real browser: no console errors, figures and math shown.

Run after ``make docs`` (it skips when ``docs/_build/html`` has not been built; with
``FLUIDNET_DOCS_SITE_REQUIRED=1`` it fails instead, as CI runs it). The site is served by
``python -m http.server`` on a free localhost port and every page is loaded in Debian's
Chromium (playwright), offline. A page passes when

* the browser logs no console error and no uncaught exception, and no request fails (a
  resource on another host, such as a CDN's MathJax, fails offline: the site must carry it);
* every image on it has loaded (``naturalWidth > 0``), and a gallery example or a notebook
  page (the course's solutions excepted) has at least one figure;
* its math is typeset: a page with ``math`` elements gets MathJax's output (raw LaTeX is
  what a reader sees when MathJax did not load).

``FLUIDNET_DOCS_HTML`` points at another built site. The check itself is tested on a small
site made here (:func:`test_the_check_finds_each_defect`), so it runs in ``make test`` too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from browser_helpers import ConsoleErrors, free_port, launch, require_browser, server

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("FLUIDNET_DOCS_HTML", ROOT / "docs" / "_build" / "html"))

#: Pages that must show at least one figure: gallery examples and notebooks (the course's
#: solutions answer in numbers, not all with a figure).
FIGURE_PAGES = ("auto_examples/plot_", "notebooks/")
NO_FIGURE_NEEDED = ("notebooks/course/solutions/",)

#: What the page reports once loaded: images not loaded, figures, math elements and MathJax's.
PROBE = """async () => {
    const math = document.querySelectorAll('.math, .amsmath').length;
    const mathjax = window.MathJax || document.querySelector('script[src*="mathjax" i]');
    for (let i = 0; i < 100 && math && mathjax && !document.querySelector('mjx-container'); i++) {
        await new Promise(r => setTimeout(r, 100));  // MathJax typesets after load
    }
    if (window.MathJax?.startup?.promise) await window.MathJax.startup.promise;
    const imgs = [...document.images];
    return {
        broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
        figures: imgs.filter(i => /_images\\/|data:image/.test(i.src)).length,
        math: math,
        typeset: document.querySelectorAll('mjx-container').length,
    };
}"""


def pages(site: Path) -> list[str]:
    """Every HTML page of a built site, relative to it (``_static``'s templates left out)."""
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if not p.relative_to(site).as_posix().startswith(("_static/", "_sources/", "_downloads/"))
    )


def check_site(
    browser, site: Path, log: Path, names: list[str] | None = None
) -> dict[str, list[str]]:
    """The defects of each page of a built site (pages without any left out); the server's
    log goes to ``log``."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    cmd += ["--directory", str(site)]
    found: dict[str, list[str]] = {}
    with server(cmd, base + "/", env=dict(os.environ), cwd=site, log=log):
        context = browser.new_context()
        page = context.new_page()
        errors = ConsoleErrors()
        errors.watch(page)
        failed: list[str] = []
        # a request the browser itself cancelled (net::ERR_ABORTED: the favicon of the page
        # left by the next goto) is no defect; a blocked CDN (name not resolved, refused) and
        # a missing file (HTTP 404, below) are
        page.on(
            "requestfailed",
            lambda r: (
                None
                if "ERR_ABORTED" in (r.failure or "")
                else failed.append(f"request failed: {r.url} ({r.failure})")
            ),
        )
        page.on(
            "response",
            lambda r: failed.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
        )
        for name in names if names is not None else pages(site):
            errors.clear()
            failed.clear()
            page.goto(f"{base}/{name}", wait_until="load", timeout=30_000)
            probe = page.evaluate(PROBE)
            bad = [*errors, *failed]
            bad += [f"image not loaded: {src}" for src in probe["broken"]]
            needs = name.startswith(FIGURE_PAGES) and not name.startswith(NO_FIGURE_NEEDED)
            if needs and not probe["figures"]:
                bad.append("no figure on a page that shows figures")
            if probe["math"] and not probe["typeset"]:
                bad.append(f"{probe['math']} math elements and none typeset (MathJax not loaded)")
            if bad:
                found[name] = bad
        context.close()
    return found


@pytest.fixture(scope="module")
def browser():
    sync_api = require_browser()
    with sync_api.sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


def _write(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<!doctype html><html><head><title>t</title></head><body>{body}</body></html>")


def test_the_check_finds_each_defect(browser, tmp_path):
    import matplotlib.pyplot as plt

    site = tmp_path / "html"
    (site / "_images").mkdir(parents=True)
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1])
    fig.savefig(site / "_images" / "fig.png")
    fig.savefig(site / "favicon.ico", format="png")  # browsers ask every site for one
    plt.close(fig)
    _write(site / "index.html", '<p>fine</p><img src="_images/fig.png">')
    _write(site / "console.html", "<script>console.error('broken widget')</script>")
    _write(site / "throws.html", "<script>undefined_function()</script>")
    _write(site / "missing.html", '<img src="_images/none.png">')
    _write(site / "auto_examples/plot_x.html", "<p>an example without its figure</p>")
    _write(site / "notebooks/n.html", '<img src="../_images/fig.png">')
    _write(site / "math.html", '<span class="math">\\(x^2\\)</span>')
    _write(site / "cdn.html", '<script src="https://cdn.example.invalid/tex-chtml.js"></script>')
    _write(site / "gone.html", '<link rel="stylesheet" href="_static/gone.css">')
    found = check_site(browser, site, tmp_path / "serve.log")
    assert set(found) == {
        "console.html",
        "throws.html",
        "missing.html",
        "auto_examples/plot_x.html",
        "math.html",
        "cdn.html",
        "gone.html",
    }, found
    assert any("broken widget" in e for e in found["console.html"])
    assert any("undefined_function" in e for e in found["throws.html"])
    assert any("image not loaded" in e for e in found["missing.html"])
    assert found["auto_examples/plot_x.html"] == ["no figure on a page that shows figures"]
    assert found["math.html"] == ["1 math elements and none typeset (MathJax not loaded)"]
    assert any("cdn.example.invalid" in e for e in found["cdn.html"])
    assert any(e.startswith("HTTP 404:") and "gone.css" in e for e in found["gone.html"])


def test_the_built_site_in_a_browser(browser, tmp_path):
    if not (SITE / "index.html").exists():
        reason = f"the documentation site is not built ({SITE}): run make docs first"
        if os.environ.get("FLUIDNET_DOCS_SITE_REQUIRED"):
            pytest.fail(reason)
        pytest.skip(reason)
    names = pages(SITE)
    assert len(names) > 50 and "index.html" in names
    found = check_site(browser, SITE, tmp_path / "serve.log", names)
    assert not found, "\n".join(f"{k}: {'; '.join(v)}" for k, v in found.items())
