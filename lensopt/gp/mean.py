"""Prior mean functions of the latent: ``f ~ GP(m, k)``.

The papers use ``m = 0``; lensopt's letter model a constant ``m`` (a float everywhere a prior mean
is accepted). :class:`BowlMean` is the prior of a refraction that starts from a known refraction:
acuity is best near the starting lens and falls off with the blur of the distance to it, in the
shape of the acuity law (Blendowske 2015, METHOD.md §1),

    m(x) = offset − depth · log10(1 + |x_J − centre|²),

on the system columns ``J`` (the lens's power vector, D). With ``depth`` the psychometric slope
``a`` (logMAR⁻¹) this is the latent ``a (s − VA)`` of a patient whose correction is the start,
up to the letter-size term, which the kernel's linear context part carries. The GP then only has
to learn how the patient differs from the start — near the optimum a tilt and a shift of the
bowl, smooth on the kernel's lengthscale — instead of the bowl itself.

A prior mean other than a constant is a :class:`MeanFunction`: ``m(X)`` ``(n,)`` and its input
gradient ``(n, d)``. :class:`BowlMean` is one; the duel value's mean ``m(s, x) − m(s, x')`` of a
preference model (:class:`lensopt.preference.model.DuelMean`) another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_LN10 = math.log(10.0)


class MeanFunction:
    """A prior mean ``m`` that varies over the inputs: ``m(X)`` ``(n,)`` and ``gradient(X)``
    ``∂m(X_i)/∂X_i`` ``(n, d)``."""

    def __call__(self, X) -> np.ndarray:
        raise NotImplementedError

    def gradient(self, X) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class BowlMean(MeanFunction):
    """``m(x) = offset − depth · log10(1 + Σ_j (x_j − centre_j)²)`` over the columns ``dims``."""

    offset: float
    depth: float
    centre: tuple[float, ...]
    dims: tuple[int, ...]

    def __post_init__(self):
        for name in ("offset", "depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"BowlMean.{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.depth < 0:
            raise ValueError(f"BowlMean.depth must be >= 0, got {self.depth!r}")
        centre = tuple(float(v) for v in self.centre)
        dims = tuple(int(d) for d in self.dims)
        if not centre or len(centre) != len(dims) or not all(math.isfinite(v) for v in centre):
            raise ValueError(
                f"BowlMean needs one finite centre value per column; got {self.centre!r} for {self.dims!r}"
            )
        object.__setattr__(self, "centre", centre)
        object.__setattr__(self, "dims", dims)

    def _offsets(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        return X[:, list(self.dims)] - np.asarray(self.centre)

    def __call__(self, X) -> np.ndarray:
        """``m(X)`` as ``(n,)``."""
        r = self._offsets(X)
        return self.offset - self.depth * np.log1p(np.sum(r**2, axis=1)) / _LN10

    def gradient(self, X) -> np.ndarray:
        """``∂m(X_i)/∂X_i`` as ``(n, d)`` (zero on the columns outside ``dims``)."""
        X = np.asarray(X, dtype=float)
        r = self._offsets(X)
        grad = np.zeros(X.shape)
        grad[:, list(self.dims)] = -self.depth * 2.0 * r / ((1.0 + np.sum(r**2, axis=1))[:, None] * _LN10)
        return grad


def check_prior_mean(prior_mean):
    """``prior_mean`` as a float (a constant mean) or a :class:`MeanFunction` (such as a
    :class:`BowlMean`); a one-line ValueError else."""
    if isinstance(prior_mean, MeanFunction):
        return prior_mean
    if isinstance(prior_mean, bool) or not isinstance(prior_mean, (int, float, np.floating)):
        raise ValueError(f"prior_mean must be a finite number or a MeanFunction (a BowlMean), got {prior_mean!r}")
    if not np.isfinite(prior_mean):
        raise ValueError(f"prior_mean must be a finite number, got {prior_mean!r}")
    return float(prior_mean)


def mean_at(prior_mean, X):
    """The prior mean at the rows of ``X``: the float itself for a constant (so that constant-mean
    arithmetic is unchanged), ``m(X)`` ``(n,)`` for a :class:`MeanFunction`."""
    return prior_mean(X) if isinstance(prior_mean, MeanFunction) else prior_mean


def values_and_gradient(mean: MeanFunction | None, X) -> tuple[np.ndarray, np.ndarray]:
    """``(m(X) (n,), ∂m/∂X (n, d))`` of an optional :class:`MeanFunction` (zeros for None)."""
    X = np.asarray(X, dtype=float)
    if mean is None:
        return np.zeros(X.shape[0]), np.zeros(X.shape)
    return mean(X), mean.gradient(X)


def values(mean: MeanFunction | None, X) -> np.ndarray:
    """``m(X)`` ``(n,)`` of an optional :class:`MeanFunction` (zeros for None)."""
    X = np.asarray(X, dtype=float)
    return np.zeros(X.shape[0]) if mean is None else mean(X)


def mean_gradient_at(prior_mean, X):
    """``∂m/∂X`` ``(n, d)`` for a :class:`MeanFunction`; ``0.0`` for a constant."""
    return prior_mean.gradient(X) if isinstance(prior_mean, MeanFunction) else 0.0


@dataclass(frozen=True)
class AcuityLawMean(BowlMean):
    """The acuity law as a prior mean of the letter latent ``a (s − VA(x))``:
    ``m(s, x) = slope · (s − va_logmar) − depth · log10(1 + |x_J − centre|²)`` (METHOD.md §1), the
    letter size ``s`` in column ``context_dim`` — the latent of a patient whose correction is the
    centre, with psychometric slope ``slope`` (logMAR⁻¹) and best acuity ``va_logmar`` — plus the
    bowl's ``offset`` (0 in the duels' use: the letter-size term carries the level)."""

    slope: float = 14.0
    va_logmar: float = 0.0
    context_dim: int = 0

    def __post_init__(self):
        super().__post_init__()
        for name in ("slope", "va_logmar"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"AcuityLawMean.{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.slope <= 0:
            raise ValueError(f"AcuityLawMean.slope must be > 0 (logMAR⁻¹), got {self.slope!r}")
        if self.context_dim in self.dims:
            raise ValueError("AcuityLawMean.context_dim must not be one of the lens columns (dims)")

    def __call__(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        return super().__call__(X) + self.slope * (X[:, self.context_dim] - self.va_logmar)

    def gradient(self, X) -> np.ndarray:
        grad = super().gradient(X)
        grad[:, self.context_dim] += self.slope
        return grad
