"""Sphinx configuration of fluidnet's documentation site (``make docs``).

The site is built with warnings as errors and nitpicky cross-references. Names from other
libraries are not resolved (the build runs offline, without intersphinx inventories); they are
listed in ``nitpick_ignore_regex`` below, and every fluidnet name must resolve.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "_ext"))

import fluidnet  # noqa: E402

project = "fluidnet"
author = "The fluidnet developers"
copyright = "2026, the fluidnet developers"  # noqa: A001
release = fluidnet.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
    "sphinx_gallery.gen_gallery",
    "apiref",
    "paperpages",
    "notebookpages",
    "xrefs",
    "offlinemath",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "**.ipynb_checkpoints",
    "jupyter_execute",
    "auto_examples/*.ipynb",  # sphinx-gallery writes them for download; the .py pages run once
]
templates_path = ["_templates"]

# -- cross-references ------------------------------------------------------------------------
nitpicky = True
default_role = "literal"  # `x` is code; cross-references are explicit (:func:, See Also)
#: Types of other libraries and numpydoc's descriptive words: not resolvable offline.
_EXTERNAL = (
    r"(numpy|np|scipy|sympy|sp|xarray|xr|matplotlib|mpl|control|dask|distributed|zarr|"
    r"concurrent|ctypes|os|pathlib|collections|typing|numbers|fractions|decimal|flint|tqdm|threadpoolctl|ns|cppyy)(\..*)?"
)
nitpick_ignore_regex = [
    (r"py:.*", _EXTERNAL),
    (r"py:.*", r"(ndarray|array_like|array-like|ArrayLike|NDArray|Dataset|DataArray|Axes|Figure)"),
    (r"py:.*", r"(Expr|Symbol|Function|Basic|Matrix|AppliedUndef|Executor|Future|Client)"),
    (r"py:.*", r"(Path|PathLike|Mapping|Sequence|Iterable|Iterator|Callable|Any|Self|Literal)"),
    (r"py:.*", r"(optional|default|callable|sequence|mapping|scalar|iterable|None\|.*)"),
    (r"py:.*", r"(int|float|complex|str|bool|bytes|dict|list|tuple|set|object|type|slice)"),
    (r"py:.*", r"(path-like|file-like|function|generator|array|matrix|string|number)"),
]

# -- autodoc and numpydoc --------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
#: No default options: a default ``members`` (even ``False``) replaces the ``:members:`` of the
#: class template (docs/_templates/autosummary/class.rst), which then listed no method or
#: property.
autodoc_default_options: dict[str, object] = {}
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
#: The class template lists each class's methods and properties; a dataclass's fields are in its
#: Attributes section, so they are left out of the members (apiref.dataclass_fields).
from apiref import dataclass_fields  # noqa: E402

autosummary_context = {"dataclass_fields": dataclass_fields()}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
#: numpydoc links builtin type words to Python's and NumPy's inventories, which the offline build
#: does not have: they stay plain words.
from numpydoc.xref import DEFAULT_LINKS  # noqa: E402

numpydoc_xref_aliases = {word: word for word in DEFAULT_LINKS}
numpydoc_validation_checks: set[str] = set()

# -- notebooks and tutorials (MyST-NB) -------------------------------------------------------
#: Notebooks and text notebooks run only when their code changed since the last build: their
#: outputs are kept by jupyter-cache in docs/_build/.jupyter_cache (``make clean`` removes it).
#: A change of the library alone does not re-run them: ``FLUIDNET_DOCS_EXECUTE=force make docs``
#: runs every one (a fresh checkout, as in CI, runs them all anyway).
nb_execution_mode = os.environ.get("FLUIDNET_DOCS_EXECUTE", "cache")
nb_execution_cache_path = str(HERE / "_build" / ".jupyter_cache")
#: Seconds a cell may run (and a kernel message may take): the slowest notebook takes 15 s on
#: 2 cores. A run once waited the full timeout for a kernel that had not started executing,
#: then went on (the notebook's ten cells ran in 1.5 s): 900 s then cost 15 min of CI.
nb_execution_timeout = 180
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
# Widgets need a kernel, which a static site has not: pages show a widget's other outputs
# (fn.explore's numbers and pictures at its starting values, as HTML; plain text for others),
# and load no widget JavaScript, which MyST-NB would take from CDNs (the site works offline;
# tests/test_docs_browser.py checks it).
nb_ipywidgets_js: dict[str, dict[str, str]] = {}
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- gallery ---------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    # no sg_execution_times pages: they load jQuery and DataTables from CDNs (the site works
    # offline; tests/test_docs_browser.py checks it)
    "write_computation_times": False,
}

# -- math ------------------------------------------------------------------------------------
#: MathJax is served with the site (docs/_ext/offlinemath.py installs and copies it), so the
#: pages render their mathematics offline; the path is relative to ``_static``.
mathjax_path = "mathjax/tex-mml-chtml.js"

# -- HTML ------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"fluidnet {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": [], "changelog": []}
# the theme's light/dark switch starts from the reader's system setting (without it the theme
# logs "Got invalid theme mode" in the browser console)
html_context = {"default_mode": "auto"}
html_favicon = "_static/favicon.svg"
html_show_sourcelink = False
