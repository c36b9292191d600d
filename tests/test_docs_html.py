"""The built documentation site renders as a reader sees it (issue 36).

Runs on the HTML that ``make docs`` writes to ``docs/_build/html`` (``make docs`` runs this file
right after building; elsewhere it is skipped while no site has been built, and checks the last
build when one has). A reader must find:

* on the own-law tutorial, the Nyquist and Bode figure with both panels drawn, and no markup
  left unrendered (``{eval}``);
* on the class pages, the methods and properties (``HopfPoint.predict``,
  ``PeriodicOrbit.amplitude``), not only the constructor's fields;
* on the pages of ``fluidnet.t``, ``fluidnet.s`` and ``fluidnet.models.RATE``, what they are,
  not sympy's ``Symbol`` docstring;
* mathematics typeset by a MathJax served with the site itself, so that it renders offline.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

HTML = Path(os.environ.get("FLUIDNET_DOCS_HTML", Path(__file__).parents[1] / "docs/_build/html"))

pytestmark = pytest.mark.skipif(
    not (HTML / "index.html").exists(), reason=f"no built site in {HTML} (make docs builds it)"
)

#: The first line of sympy's ``Symbol`` docstring.
SYMPY_SYMBOL_DOC = "Symbol class is used to create symbolic variables"


def soup(page: str):
    bs4 = pytest.importorskip("bs4")
    path = HTML / page
    assert path.exists(), f"{page} was not built"
    return bs4.BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def colored_fraction(image: np.ndarray) -> float:
    """Fraction of the pixels that are neither white, grey nor black: drawn curves (matplotlib's
    colour cycle), not the frame, ticks and labels an empty axes has."""
    rgb = image[..., :3].astype(float)
    if rgb.max() > 1.0:
        rgb = rgb / 255.0
    chroma = rgb.max(axis=-1) - rgb.min(axis=-1)
    return float(np.mean(chroma > 0.25))


def cell_images(page, code: str) -> list[Path]:
    """The images in the output of the code cell whose source contains ``code``."""
    for cell in page.select("div.cell"):
        source = cell.select_one("div.cell_input")
        if source is not None and code in source.get_text():
            out = cell.select_one("div.cell_output")
            imgs = out.find_all("img") if out is not None else []
            return [(HTML / "tutorials" / img["src"]).resolve() for img in imgs]
    raise AssertionError(f"no code cell with {code!r}")


def test_own_law_figure_has_two_drawn_panels():
    import matplotlib.image

    page = soup("tutorials/own_law.html")
    images = cell_images(page, "fn.nyquist(L).plot(ax=axes[0]")
    assert len(images) == 1, f"the Nyquist/Bode cell made {len(images)} figures: {images}"
    image = matplotlib.image.imread(images[0])
    width = image.shape[1]
    left, right = image[:, : width // 2], image[:, width // 2 :]
    # an empty axes has a frame and ticks only: no coloured pixel at all
    assert colored_fraction(left) > 0.002, "the left panel (Nyquist) is empty"
    assert colored_fraction(right) > 0.002, "the right panel (Bode) is empty"


def test_own_law_page_has_no_unrendered_roles():
    text = soup("tutorials/own_law.html").get_text()
    assert "{eval}" not in text
    assert "{glue" not in text and "{func}" not in text


def test_class_pages_list_methods_and_properties():
    hopf = soup("api/generated/fluidnet.HopfPoint.html")
    assert hopf.find(id="fluidnet.HopfPoint.predict") is not None
    assert hopf.find(id="fluidnet.HopfPoint.amplitude_coefficient") is not None
    orbit = soup("api/generated/fluidnet.PeriodicOrbit.html")
    entry = orbit.find(id="fluidnet.PeriodicOrbit.amplitude")
    assert entry is not None
    # and what "amplitude" means, next to it
    assert "peak-to-peak" in entry.find_parent("dl").get_text().lower()
    solution = soup("api/generated/fluidnet.Solution.html")
    assert solution.find(id="fluidnet.Solution.plot") is not None


@pytest.mark.parametrize(
    "page, words",
    [
        ("fluidnet.t", "time"),
        ("fluidnet.s", "Laplace"),
        ("fluidnet.models.RATE", "rate"),
    ],
)
def test_symbol_pages_have_their_own_documentation(page, words):
    text = soup(f"api/generated/{page}.html").select_one("article").get_text()
    assert SYMPY_SYMBOL_DOC not in text
    assert words in text


def test_mathjax_is_served_with_the_site():
    script = HTML / "_static" / "mathjax" / "tex-mml-chtml.js"
    assert script.exists()
    fonts = list((HTML / "_static/mathjax/output/chtml/fonts/woff-v2").glob("*.woff"))
    assert len(fonts) > 10
    pages_with_math = 0
    for path in HTML.rglob("*.html"):
        page = soup(str(path.relative_to(HTML)))
        sources = [tag.get("src", "").split("?")[0] for tag in page.find_all("script")]
        remote = [src for src in sources if "mathjax" in src.lower() and "//" in src]
        assert not remote, (path, remote)
        if page.select_one(".math"):
            pages_with_math += 1
            local = [src for src in sources if src.endswith("_static/mathjax/tex-mml-chtml.js")]
            assert local, path
            assert (path.parent / local[0]).resolve() == script.resolve(), path
    assert pages_with_math > 5


def test_python_control_page_exists_and_ran():
    page = soup("python_control.html")
    text = page.get_text()
    assert "root_locus" in text and "to_control(pade=n)" in text
    assert "largest error" in text  # the Padé comparison executed
