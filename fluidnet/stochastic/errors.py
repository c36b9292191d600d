"""Exceptions of the stochastic solvers (both are :class:`fluidnet.AnalysisError`)."""

from __future__ import annotations

from ..errors import AnalysisError

__all__ = ["NotNormalizableError", "GridConvergenceError"]


class NotNormalizableError(AnalysisError):
    """The stationary density does not exist: the window escapes to infinity (the marking
    becomes too weak for the increase law), or has no finite normalization on the window axis.
    The message names the window reached and the hazard integral found there."""


class GridConvergenceError(AnalysisError):
    """A discretization did not converge: the estimated error of a statistic exceeds the
    tolerance at the requested grid size (the message names the statistic, the two grid
    sizes compared and the estimate), or the discrete solution lost a property the exact one
    has (a negative density, a non-monotone distribution function)."""
