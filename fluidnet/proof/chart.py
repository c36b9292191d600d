"""Proved stability charts: :func:`certified_chart`, an adaptive quadtree over a plane."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import OptionError
from .certificate import RegionCertificate
from .region import certify_region

if TYPE_CHECKING:
    from ..symbolic.model import Model

__all__ = ["certified_chart"]


def certified_chart(
    model: Model,
    x: str,
    y: str,
    *,
    x_range: tuple[Any, Any],
    y_range: tuple[Any, Any],
    depth: int = 6,
    params: Mapping[str, Any] | None = None,
    **fixed: Any,
) -> RegionCertificate:
    """A proved stability chart of the plane of two parameters.

    The rectangle ``x_range x y_range`` is split as a quadtree: each cell is proved stable,
    proved unstable (with its number of roots in the right half-plane) or, after ``depth``
    levels of splitting, left undecided; only cells that fail are split, so the undecided
    cells shrink with ``depth`` and hug the stability boundary. See
    :func:`fluidnet.certify_region` for what is proved and how.

    Parameters
    ----------
    model : fluidnet.Model
    x, y : str
        The two parameters.
    x_range, y_range : (lo, hi)
        The rectangle, read exactly (floats by their shortest decimal).
    depth : int, default 6
        Quadtree levels: the smallest cells are ``2**-depth`` of each range.
    params : dict, optional
        Values of the other parameters (default the model's).
    **fixed
        The same as keywords.

    Returns
    -------
    RegionCertificate
        ``.plot()`` draws the cells with the exact boundary of
        :func:`fluidnet.stability_boundary` on top; ``.fraction_proved``, ``.to_xarray()``,
        ``.save(path)``.

    Raises
    ------
    OptionError
        When ``x`` and ``y`` are the same parameter, or for a bad range or depth.
    ParameterError
        For an unknown parameter or a value that is not a real number.

    Examples
    --------
    >>> import fluidnet as fn
    >>> x = fn.states("x")
    >>> a, b = fn.params("a b")
    >>> hayes = fn.Model(rhs={x: a * x(fn.t) + b * x(fn.t - 1)}, params={a: -1.0, b: 0.5})
    >>> chart = fn.certified_chart(hayes, "a", "b", x_range=(-3, 0.5), y_range=(-3, 1), depth=4)
    >>> chart.fraction_proved > 0.7
    True
    """
    if x == y:
        raise OptionError(f"x and y must be two different parameters, got {x!r} twice")
    return certify_region(model, {x: x_range, y: y_range}, depth=depth, params=params, **fixed)
