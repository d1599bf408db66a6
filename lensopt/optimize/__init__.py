"""Acquisition optimization: quasi-random candidates and bounded multi-start L-BFGS-B."""

from lensopt.optimize.candidates import as_bounds, scrambled_halton, uniform
from lensopt.optimize.maximize import (
    POSTERIOR_MEAN_SEARCH,
    MaximizerSettings,
    TiltedMean,
    maximize_acquisition,
    maximize_on_line,
    maximize_posterior_mean,
)

__all__ = [
    "POSTERIOR_MEAN_SEARCH",
    "MaximizerSettings",
    "TiltedMean",
    "as_bounds",
    "maximize_acquisition",
    "maximize_on_line",
    "maximize_posterior_mean",
    "scrambled_halton",
    "uniform",
]
