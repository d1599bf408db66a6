"""Acquisition optimization: quasi-random candidates and bounded multi-start L-BFGS-B."""

from lensopt.optimize.candidates import as_bounds, scrambled_halton, uniform
from lensopt.optimize.maximize import MaximizerSettings, maximize_acquisition, maximize_on_line

__all__ = ["MaximizerSettings", "as_bounds", "maximize_acquisition", "maximize_on_line", "scrambled_halton", "uniform"]
