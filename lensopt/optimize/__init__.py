"""Acquisition optimization: quasi-random candidates and bounded multi-start L-BFGS-B."""

from lensopt.optimize.candidates import as_bounds, scrambled_halton, uniform
from lensopt.optimize.maximize import MaximizerSettings, maximize_acquisition, maximize_on_line

__all__ = ["as_bounds", "scrambled_halton", "uniform", "MaximizerSettings", "maximize_acquisition", "maximize_on_line"]
