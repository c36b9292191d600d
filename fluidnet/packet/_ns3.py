"""Loading ns-3 (the ``ns3`` wheel, cppyy bindings) and fluidnet's C++ components into a process.

Only the packet-simulation server imports this module (:mod:`fluidnet.packet._server`): the
process that calls :func:`fluidnet.packet.simulate` never loads ns-3.

The wheel's own loader (``from ns import ns``) parses the headers of all of ns-3's modules
(wifi, LTE, ...), about 28 s of CPU on the development machine under load; the packet stage
needs eight of them (core, stats, network, bridge, traffic-control, internet, point-to-point,
applications), which take about 5 s. :func:`load` loads those libraries first (so their static
initializers run before cling sees their headers) and then includes their headers, and falls
back to the wheel's loader when the wheel's layout is not the expected one.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from .errors import NotInstalledError

__all__ = ["MODULES", "SOURCES", "available", "load", "components_source"]

#: The ns-3 modules the packet stage uses, in dependency order.
MODULES = (
    "core",
    "stats",
    "network",
    "bridge",
    "traffic-control",
    "internet",
    "point-to-point",
    "applications",
)

_CXX = Path(__file__).with_name("cxx")
#: The C++ sources compiled into the server, in order (``cxx/``).
SOURCES = (
    "components.cc",
    "avq.cc",
    "utility_laws.cc",
    "assured.cc",
    "ecn_laws.cc",
    "xcp.cc",
    "experiment.cc",
)
_loaded = None


def available() -> bool:
    """Whether the ``ns3`` wheel and cppyy are installed (without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in ("ns3", "cppyy"))


def require() -> None:
    """Raise :class:`NotInstalledError` unless ns-3 can be loaded."""
    if not available():
        raise NotInstalledError(
            "packet simulations need ns-3's Python bindings (the 'ns3' package and cppyy), "
            "which are not installed: pip install 'fluidnet[packet]'"
        )


def components_source() -> str:
    """The C++ source of fluidnet's ns-3 components (queue discs, transports, experiment)."""
    return "\n".join((_CXX / name).read_text() for name in SOURCES)


def _prefix() -> Path | None:
    spec = importlib.util.find_spec("ns3")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(list(spec.submodule_search_locations)[0])
    return root if (root / "include" / "ns3").is_dir() else None


def _library(libdir: Path, module: str) -> Path | None:
    found = sorted(libdir.glob(f"libns3*-{module}.so"))
    return found[0] if found else None


def _load_light():
    """Load the needed modules directly; None when the layout is not the wheel's."""
    import cppyy
    import libcppyy

    prefix = _prefix()
    if prefix is None:
        return None
    libdir = next((prefix / d for d in ("lib64", "lib") if (prefix / d).is_dir()), None)
    if libdir is None:
        return None
    libraries = [_library(libdir, m) for m in MODULES]
    if any(lib is None for lib in libraries):
        return None
    libcppyy.AddSmartPtrType("Ptr")
    cppyy.add_library_path(str(libdir))
    cppyy.add_include_path(str(prefix / "include"))
    # the wheel links core and stats against GSL and SQLite; its loader defines these too
    cppyy.cppexec("#define HAVE_GSL 1\n#define HAVE_SQLITE3 1\n")
    for lib in libraries:
        cppyy.load_library(str(lib))
    for module in MODULES:
        cppyy.include(f"ns3/{module}-module.h")
    return cppyy.gbl.ns3


def load():
    """Load ns-3 and compile fluidnet's components; return the ``ns3`` namespace (cached).

    Raises
    ------
    NotInstalledError
        When the ``ns3`` package (or cppyy) is not installed.
    """
    global _loaded
    if _loaded is not None:
        return _loaded
    require()
    ns = _load_light()
    if ns is None:  # another layout (a source build): the bindings' own loader
        # a source build's bindings module defines ns.ns at run time (not seen statically)
        from ns import ns  # noqa: F811  # pyright: ignore[reportAttributeAccessIssue]
    import cppyy

    cppyy.cppdef(components_source())
    _loaded = ns
    return ns
