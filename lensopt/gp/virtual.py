"""Virtual sign observations: prior knowledge that the latent falls across a boundary.

Siivola, Vehtari, Vanhatalo, González & Andersen (2018), "Correcting boundary over-exploration
deficiencies in Bayesian optimization with virtual derivative sign observations": a GP that
over-smooths a bowl puts its maximum on the edge of the search box, where nothing was measured
beyond; told that the function *decreases outward* across each edge, it keeps the maximum inside.

Here each virtual observation is a finite difference rather than a derivative: the site latent is
``u = (f(inner) − f(outer)) / scale`` with ``outer`` a small ``step`` beyond the box and
``scale = step · noise``, labelled 1 (``f(inner) > f(outer)``). ``u`` is a linear function of
``f``, so its covariance with ``f`` and with other sites comes from the kernel alone
(``cov(u, f(x)) = (k(inner, x) − k(outer, x)) / scale``): no derivative kernels, and the
classifier's inference treats ``u`` as one more latent site. ``noise`` is the derivative's scale
in latent units per input unit: with ``|∂f/∂n| ≫ noise`` the site is near certain either way.

The sites share the model's answer likelihood (``γ + κ Φ(u)``), so each carries at most
``log(1/γ)`` of evidence and the answers override it where the optimum really lies outside the
box (a patient whose correction lies beyond the lens box).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from lensopt.gp.mean import mean_at


@dataclass(frozen=True, eq=False)
class SignObservations:
    """``m`` virtual observations "``f(inner_i) > f(outer_i)``", each the site
    ``(f(inner_i) − f(outer_i)) / scale`` with label 1. ``inner`` and ``outer`` are ``(m, d)``."""

    inner: np.ndarray
    outer: np.ndarray
    scale: float
    points: np.ndarray = field(init=False, repr=False)
    """The ``2m`` points the sites read: ``inner`` then ``outer`` (derived)."""

    def __post_init__(self):
        inner, outer = np.array(self.inner, dtype=float), np.array(self.outer, dtype=float)
        if inner.ndim != 2 or inner.shape != outer.shape or inner.shape[0] == 0:
            raise ValueError(
                f"inner and outer must be (m, d) arrays of one shape, m ≥ 1; got {inner.shape} and {outer.shape}"
            )
        if not (np.all(np.isfinite(inner)) and np.all(np.isfinite(outer))):
            raise ValueError("inner and outer must be finite")
        if not (np.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"scale must be a positive number, got {self.scale!r}")
        points = np.vstack([inner, outer])  # read by every prediction: stacked once
        for array in (inner, outer, points):
            array.setflags(write=False)
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "outer", outer)
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "scale", float(self.scale))

    @property
    def n_sites(self) -> int:
        return self.inner.shape[0]

    def combine(self, values: np.ndarray) -> np.ndarray:
        """Site values from values at :attr:`points` (along the first axis): ``(v_inner − v_outer) / scale``."""
        m = self.n_sites
        return (values[:m] - values[m:]) / self.scale

    def spread(self, weights: np.ndarray) -> np.ndarray:
        """The transpose of :meth:`combine`: weights on the sites as weights on :attr:`points`."""
        return np.concatenate([weights, -weights]) / self.scale

    def cross(self, kernel, X) -> np.ndarray:
        """``cov(u, f(X))`` as ``(m, n)``."""
        return self.combine(kernel(self.points, X))

    def gradient_x(self, kernel, X) -> np.ndarray:
        """``∂ cov(u_j, f(X_i)) / ∂X_i`` as ``(n, m, d)``."""
        return self.combine(np.moveaxis(kernel.gradient_x(X, self.points), 1, 0)).transpose(1, 0, 2)

    def prior_mean(self, mean) -> np.ndarray:
        """The sites' prior mean ``(m,)`` under the latent's prior mean ``mean`` (0 for a constant)."""
        return self.combine(np.broadcast_to(mean_at(mean, self.points), (2 * self.n_sites,)))


def box_edge_signs(
    n_context: int, system_bounds, noise: float, points_per_edge: int = 9, step: float = 0.1
) -> SignObservations:
    """Virtual observations that the latent falls outward across every face of the system box.

    On each face (one system column at its lower or upper bound) the points form a grid of
    ``points_per_edge`` values per other system column (bounds included); each is paired with the
    point ``step`` outside the face. Context columns are 0 in both points (for a kernel additive in
    the context, such as the psychophysics kernel ``θ s s' + k(x, x')``, their value cancels).
    """
    bounds = [tuple(map(float, b)) for b in system_bounds]
    if not (np.isfinite(noise) and noise > 0):
        raise ValueError(f"noise must be a positive number, got {noise!r}")
    if not (isinstance(points_per_edge, int) and points_per_edge >= 2):
        raise ValueError(f"points_per_edge must be an integer ≥ 2, got {points_per_edge!r}")
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"step must be a positive number, got {step!r}")
    grids = [np.linspace(lo, hi, points_per_edge) for lo, hi in bounds]
    inner, outer = [], []
    for j, (lo, hi) in enumerate(bounds):
        others = [grids[k] for k in range(len(bounds)) if k != j]
        for bound, direction in ((lo, -1.0), (hi, 1.0)):
            for values in itertools.product(*others):
                point = list(values)
                point.insert(j, bound)
                beyond = list(point)
                beyond[j] = bound + direction * step
                inner.append([0.0] * n_context + point)
                outer.append([0.0] * n_context + beyond)
    return SignObservations(np.array(inner), np.array(outer), step * noise)
