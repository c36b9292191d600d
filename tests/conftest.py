"""Shared test setup."""

import matplotlib

matplotlib.use("Agg")
