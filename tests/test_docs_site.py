"""The documentation site's API reference covers every public name, and its gallery is whole.

The reference pages are written by ``docs/_ext/apiref.py`` from the packages' ``__all__``; this
checks, without building the site, that every public name lands on a page and that a name no
stage can place is an error rather than a silent omission.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

import fluidnet as fn

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def apiref():
    spec = importlib.util.spec_from_file_location("apiref", DOCS / "_ext" / "apiref.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["apiref"] = module
    spec.loader.exec_module(module)
    return module


def _documented(apiref) -> set[str]:
    return {name for names in apiref.sections().values() for name in names}


def test_every_public_name_has_a_page(apiref):
    documented = _documented(apiref)
    top = {f"fluidnet.{n}" for n in fn.__all__ if n not in apiref.MODULE_NAMES}
    models = {f"fluidnet.models.{n}" for n in fn.models.__all__}
    sweep = {f"fluidnet.sweep.{n}" for n in importlib.import_module("fluidnet.sweep").__all__}
    packet = {f"fluidnet.packet.{n}" for n in importlib.import_module("fluidnet.packet").__all__}
    missing = (top | models | sweep | packet) - documented
    assert not missing, sorted(missing)
    assert "fluidnet.simulate" in documented and "fluidnet.models.rcp" in documented


def test_every_documented_name_is_public_and_in_one_stage(apiref):
    sections = apiref.sections()
    seen: dict[str, str] = {}
    for stage, names in sections.items():
        for name in names:
            assert name not in seen, (name, stage, seen.get(name))
            seen[name] = stage
            module, _, attr = name.rpartition(".")
            assert attr in importlib.import_module(module).__all__, name


def test_a_name_no_stage_can_place_is_an_error(apiref):
    with pytest.raises(LookupError, match="no documented stage"):
        apiref._stage("numpy.linalg")


def test_every_module_is_on_the_modules_page(apiref):
    modules = apiref.modules()
    assert "fluidnet.dde.simulation" in modules and "fluidnet.papers.rcp.targets" in modules
    assert not any(part.startswith("_") for m in modules for part in m.split("."))


def test_the_gallery_has_at_least_fifteen_examples_each_with_a_title():
    examples = sorted((DOCS.parent / "examples").glob("plot_*.py"))
    assert len(examples) >= 15, examples
    for path in examples:
        text = path.read_text()
        assert text.startswith('"""'), path.name  # sphinx-gallery reads the title from it
        lines = text[3:].lstrip("\n").split("\n")
        title, underline = lines[0].strip(), lines[1].strip()
        assert title and set(underline) == {"="} and len(underline) >= len(title), path.name


def test_a_paper_page_shows_its_figure_pairs_side_by_side(tmp_path, monkeypatch):
    # issue 35: the paper pages show each packet figure beside its fluid prediction; a figure
    # not generated yet is named, not left as a broken image (the site builds with -W)
    from fluidnet.papers import readme

    spec = importlib.util.spec_from_file_location("paperpages", DOCS / "_ext" / "paperpages.py")
    pages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pages)
    assert (pages.PAIRS_BEGIN, pages.PAIRS_END) == (readme.PAIRS_BEGIN, readme.PAIRS_END)
    paper = tmp_path / "zz"
    (paper / "figures").mkdir(parents=True)
    (paper / "figures" / "packet_q.png").write_bytes(b"png")
    (paper / "README.md").write_text(
        "# zz\n\ntext\n\n"
        + "\n".join(
            [
                readme.PAIRS_BEGIN,
                "**caption**",
                "",
                "| ns-3 | fluid |",
                "|---|---|",
                "| ![ns-3: packet_q](figures/packet_q.png) "
                "| ![fluid: fluid_q](figures/fluid_q.png) |",
                readme.PAIRS_END,
                "## Targets",
            ]
        )
    )
    monkeypatch.setattr(pages, "PAPERS", tmp_path)
    page = pages._page("zz")
    assert f":end-before: {readme.PAIRS_BEGIN}" in page
    assert f":start-after: {readme.PAIRS_END}" in page
    assert (
        "| ![packet_q](../../papers/zz/figures/packet_q.png) | "
        "(`fluid_q.png` appears after `fluidnet reproduce zz`) |"
    ) in page
    assert "**caption**" in page
    (paper / "README.md").write_text("# zz\n\nno pairs\n")
    assert ":end-before:" not in pages._page("zz")
