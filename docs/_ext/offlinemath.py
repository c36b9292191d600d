"""Serve MathJax with the site, so that its mathematics renders offline (no CDN).

The pages load ``_static/mathjax/tex-mml-chtml.js`` (``mathjax_path`` in ``conf.py``). MathJax 3
comes from the npm registry's ``mathjax`` package, which this extension installs with ``npm``
into ``docs/_build/mathjax`` the first time the site is built (a directory given by the
environment variable ``FLUIDNET_MATHJAX``, holding MathJax's ``es5`` components, is used
instead when set). After an HTML build, the combined TeX/MathML component is copied into the
site with what it loads on demand: its fonts, the TeX extensions it autoloads, the menu and the
accessibility components (about 9 MB). MathJax 3 rather than 4: version 3's combined component
finds its fonts beside itself, version 4 fetches them from a CDN unless configured otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from sphinx.errors import ExtensionError

HERE = Path(__file__).resolve().parents[1]
#: The npm package's version (pinned: the site is tested with it).
VERSION = "3.2.2"
PREFIX = HERE / "_build" / "mathjax"
#: What the site needs of MathJax's es5 directory.
PARTS = ("tex-mml-chtml.js", "input", "output", "ui", "a11y", "sre", "adaptors")


def es5_directory() -> Path:
    """MathJax's ``es5`` directory: ``$FLUIDNET_MATHJAX`` or the one installed here by npm."""
    given = os.environ.get("FLUIDNET_MATHJAX")
    return Path(given) if given else PREFIX / "node_modules" / "mathjax" / "es5"


def _install(app) -> None:
    es5 = es5_directory()
    if (es5 / "tex-mml-chtml.js").exists():
        return
    if os.environ.get("FLUIDNET_MATHJAX"):
        raise ExtensionError(f"FLUIDNET_MATHJAX={es5} holds no tex-mml-chtml.js")
    npm = shutil.which("npm")
    if npm is None:
        raise ExtensionError(
            "the documentation serves MathJax itself and installs it with npm, which is not "
            "on PATH: install Node.js and npm (Debian: apt-get install npm), or set "
            f"FLUIDNET_MATHJAX to the es5 directory of a MathJax {VERSION} copy"
        )
    PREFIX.mkdir(parents=True, exist_ok=True)
    cmd = [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund", f"mathjax@{VERSION}"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (es5 / "tex-mml-chtml.js").exists():
        raise ExtensionError(
            f"installing MathJax failed ({' '.join(cmd)}, exit {done.returncode}): "
            f"{done.stderr.strip()[-2000:]}"
        )


def _copy(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    es5 = es5_directory()
    target = Path(app.outdir) / "_static" / "mathjax"
    target.mkdir(parents=True, exist_ok=True)
    for part in PARTS:
        src, dst = es5 / part, target / part
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)
    licence = es5.parent / "LICENSE"
    if licence.exists():
        shutil.copy2(licence, target / "LICENSE")


def setup(app):
    app.connect("builder-inited", _install)
    app.connect("build-finished", _copy)
    return {"parallel_read_safe": True, "version": "1"}
