"""The interactive explorer: widgets over the analysis stages, with no numerics of its own.

:func:`explore` returns an :class:`Explorer`, an ipywidgets application for JupyterLab or a
Voila page: sliders for a model's parameters (:mod:`~fluidnet.explore.sliders`), each point's
results from the stages (:mod:`~fluidnet.explore.point`), drawn into one figure updated in
place (:mod:`~fluidnet.explore.figure`) and a table of numbers
(:mod:`~fluidnet.explore.numbers`), updated while a slider moves at most every ``interval``
seconds (:mod:`~fluidnet.explore.debounce`).
"""

from __future__ import annotations

from .._lazy import attach_stub
from .launch import explore as explore  # named like this package: bound eagerly

__getattr__, __dir__, __all__ = attach_stub(globals())
