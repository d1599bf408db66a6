"""The two benchmark problems: contextual binary test functions, and simulated refraction.

Contextual binary problem (seed paper §4): for a rescaled, maximized test function ``g``
(:mod:`lensopt.bench.rescaling`), a query ``(s, x)`` with context ``s ∈ [0, 1]`` succeeds with
probability ``P(c = 1 | s, x) = Φ(s · g(x))``; the surrogate uses ``k((s, x), (s', x')) =
s s' k(x, x')`` with the base kernel family of Table S1. The tracked value of a run is
``g(x̂)`` of the reported optimum (higher is better).

Refraction problem (seed paper §5.3): a simulated patient answers letter trials; the tracked
value is the acuity error ``VA(x̂) − VA_best`` in logMAR at the reported lens (lower is better).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtr

from lensopt.bench.functions import TestFunction, get_function
from lensopt.bench.hyperparameters import base_kernel
from lensopt.bench.reference_table import DEFAULT_TABLE_PATH, load_kernel_hyperparameters, load_rescaling_table
from lensopt.bench.rescaling import Rescaling
from lensopt.gp.kernels import benchmark_context_kernel
from lensopt.observer import check_answer_rates, draw_patients

#: Default lengthscale of the base kernel, as a fraction of the domain's width per dimension,
#: used with ``hyperparameters="default"``. The paper's protocol, ``"fitted"``, uses instead the
#: per-function maximum-likelihood values stored in ``data/benchmark-rescaling.json``
#: (:mod:`lensopt.bench.hyperparameters`).
DEFAULT_LENGTHSCALE_FRACTION = 0.2

#: Where the base-kernel hyperparameters come from: the stored fit, or the documented default.
HYPERPARAMETER_SOURCES = ("fitted", "default")

#: Default variance of the base kernel: ``g`` is standardized to variance 1.
DEFAULT_KERNEL_VARIANCE = 1.0

#: Context domain of the contextual binary benchmark.
CONTEXT_BOUNDS = ((0.0, 1.0),)

#: Slopes of the refraction benchmark: 8 evenly spaced in [1, 8] logMAR⁻¹ (seed paper §5.3).
PAPER_SLOPES = tuple(float(a) for a in np.linspace(1.0, 8.0, 8))

#: Trials per refraction run in the paper.
PAPER_REFRACTION_TRIALS = 260


@dataclass(frozen=True)
class FunctionProblem:
    """One test function as a contextual binary problem, ``P(c=1 | s, x) = Φ(s g(x))``."""

    function: TestFunction
    rescaling: Rescaling
    lengthscales: tuple[float, ...] | None = None  # None: lengthscale_fraction × width
    kernel_variance: float = DEFAULT_KERNEL_VARIANCE
    lengthscale_fraction: float = DEFAULT_LENGTHSCALE_FRACTION
    direction: str = field(default="max", init=False)

    def __post_init__(self):
        if not (0 < self.lengthscale_fraction <= 10):
            raise ValueError(
                f"FunctionProblem.lengthscale_fraction must be in (0, 10], got {self.lengthscale_fraction}"
            )
        if not (math.isfinite(self.kernel_variance) and self.kernel_variance > 0):
            raise ValueError(f"FunctionProblem.kernel_variance must be > 0, got {self.kernel_variance}")
        if self.lengthscales is not None:
            ell = tuple(float(v) for v in self.lengthscales)
            if len(ell) != self.function.dim or not all(math.isfinite(v) and v > 0 for v in ell):
                raise ValueError(
                    f"FunctionProblem.lengthscales must be {self.function.dim} positive "
                    f"numbers, got {self.lengthscales}"
                )
            object.__setattr__(self, "lengthscales", ell)

    @property
    def name(self) -> str:
        return self.function.slug

    @property
    def system_bounds(self) -> tuple[tuple[float, float], ...]:
        return self.function.bounds

    @property
    def context_bounds(self) -> tuple[tuple[float, float], ...]:
        return CONTEXT_BOUNDS

    def g(self, X) -> np.ndarray:
        """Rescaled, maximized objective at ``X`` ``(n, d)`` -> ``(n,)`` (or float for ``(d,)``)."""
        X = np.asarray(X, dtype=float)
        return self.rescaling.transform(self.function(X))

    @property
    def optimal_value(self) -> float:
        """``max g``, reached at the function's known optimizers."""
        return float(np.max(self.g(np.array(self.function.optimizers))))

    def probability(self, s, X) -> np.ndarray:
        """``Φ(s · g(x))`` for contexts ``s`` ``(n,)`` and points ``X`` ``(n, d)``."""
        s = np.asarray(s, dtype=float)
        if np.any((s < 0) | (s > 1)):
            raise ValueError(f"{self.name}: the context s must lie in [0, 1], got {s}")
        return ndtr(s * self.g(X))

    def kernel(self):
        """``s s' k(x, x')`` over columns ``[s, x...]``, ``k`` of the function's Table S1 family.

        Base hyperparameters: ``lengthscales`` and ``kernel_variance`` (the stored fit), or by
        default a lengthscale of ``lengthscale_fraction × width`` per dimension and variance 1.
        """
        return benchmark_context_kernel(self.base_kernel(first_column=1), context_dims=(0,))

    def base_kernel(self, first_column: int = 0):
        """The base kernel ``k(x, x')`` of the function's Table S1 family on the ``dim`` columns
        starting at ``first_column`` (0 without a context, 1 after a context column)."""
        widths = self.function.upper - self.function.lower
        lengthscales = (
            np.array(self.lengthscales) if self.lengthscales is not None else self.lengthscale_fraction * widths
        )
        return base_kernel(
            self.function.kernel_family,
            lengthscales,
            self.kernel_variance,
            tuple(range(first_column, first_column + self.function.dim)),
            widths,
        )

    def duel_probability(self, s, X_first, X_second) -> np.ndarray:
        """``Φ(s · (g(x) − g(x')))``: the first member wins the duel (``s = 1`` without a
        context; seed paper eq. 10–11 with the contextual scaling of the binary problem)."""
        s = np.asarray(s, dtype=float)
        if np.any((s < 0) | (s > 1)):
            raise ValueError(f"{self.name}: the context s must lie in [0, 1], got {s}")
        return ndtr(s * (self.g(X_first) - self.g(X_second)))


def function_problem(slug: str, hyperparameters: str = "fitted", rescaling_path=DEFAULT_TABLE_PATH) -> FunctionProblem:
    """The contextual problem of the function ``slug``, rescaled with the reference table.

    ``hyperparameters``: ``"fitted"`` (the stored maximum-likelihood fit, the paper's protocol)
    or ``"default"`` (``DEFAULT_LENGTHSCALE_FRACTION`` of the width, variance 1).
    """
    if hyperparameters not in HYPERPARAMETER_SOURCES:
        raise ValueError(f"hyperparameters must be one of {HYPERPARAMETER_SOURCES}, got {hyperparameters!r}")
    function = get_function(slug)
    table = load_rescaling_table(rescaling_path)
    if slug not in table:
        raise ValueError(
            f"{slug!r} is missing from the rescaling table {rescaling_path}; regenerate it with `lensopt bench rescale`"
        )
    if hyperparameters == "default":
        return FunctionProblem(function, table[slug])
    fitted = load_kernel_hyperparameters(rescaling_path).get(slug)
    if fitted is None:
        raise ValueError(
            f"no fitted kernel hyperparameters for {slug!r} in {rescaling_path}; "
            "run `lensopt bench rescale --fit-kernels` or use "
            "--hyperparameters default"
        )
    return FunctionProblem(
        function, table[slug], lengthscales=tuple(fitted["lengthscales"]), kernel_variance=fitted["variance"]
    )


@dataclass(frozen=True)
class RefractionProblem:
    """Simulated refraction at one psychometric slope; one patient per repetition seed.

    ``lapse`` and ``n_alternatives`` are the patients' lapse rate and number of letters (the
    paper's 0 and 26 by default); they change the answers, not the true corrections, so the
    patient of a seed has the same correction in every condition.
    """

    slope: float
    n_trials: int = PAPER_REFRACTION_TRIALS
    lapse: float = 0.0
    n_alternatives: int = 26
    direction: str = field(default="min", init=False)

    def __post_init__(self):
        if not (math.isfinite(self.slope) and self.slope > 0):
            raise ValueError(f"RefractionProblem.slope must be > 0 (logMAR⁻¹), got {self.slope}")
        if self.n_trials < 1:
            raise ValueError(f"RefractionProblem.n_trials must be >= 1, got {self.n_trials}")
        check_answer_rates("RefractionProblem", self.n_alternatives, self.lapse)

    @property
    def name(self) -> str:
        return refraction_problem_name(self.slope)

    def patient(self, seed: int):
        """The patient of repetition ``seed``: the same for every rule (a paired design)."""
        return draw_patients(1, seed, slope=self.slope, lapse=self.lapse, n_alternatives=self.n_alternatives)[0]


def refraction_problem_name(slope: float) -> str:
    """``"slope-5"`` for 5.0; the name under which runs and tables are stored."""
    return f"slope-{slope:g}"
