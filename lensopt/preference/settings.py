"""Settings of the preference optimizer (frozen, validated, JSON round-trippable), its default
kernel, and kernels as plain JSON records.

Columns: context first, then system parameters; a duel input is ``[s, x, x']``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lensopt.binary.settings import check_seed
from lensopt.boxes import BoxSettings
from lensopt.gp import kernels
from lensopt.gp.kernels.base import _BaseKernel, _Composite

#: Rules of plain (context-free) preferential BO, companion paper §4.2 and its Table S1.
DUEL_RULES = ("muc", "kss", "dueling-ucb", "duel-ts", "dueling-ts", "ei", "bivariate-ei", "eiig", "random")
#: Rules of contextual preferential BO, seed paper §3.4 and §4.2 (with its controls).
CONTEXTUAL_RULES = ("muc-ald", "kss-ald", "muc-random", "kss-random", "bald", "random")
#: Rules that accept ``batch_size > 2`` (companion paper §4.3).
BATCH_RULES = ("muc", "kss", "random", "muc-ald", "kss-ald", "muc-random", "kss-random")
INFERENCE_METHODS = ("laplace", "ep")

DEFAULT_LENGTHSCALE_FRACTION = 0.2
"""Default SE lengthscale of the utility, as a fraction of each system parameter's range."""


def _positive_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class PreferenceSettings(BoxSettings):
    """Everything that determines a preference optimizer's choices, apart from its kernel and history.

    ``batch_size``: members per query (2 = a duel); ``n_initial``: duels observed before the rule
    takes over (uniform random queries until then); ``reference_context``: the context ``s₀`` at
    which duels are chosen and the optimum reported (``None``: the upper context bounds).
    ``n_candidates``/``n_starts``: quasi-random candidates and L-BFGS-B starts of each search;
    ``n_thompson_features``: random features of a Thompson utility draw.
    """

    setting_name = "preference setting"

    rule: str = "muc"
    seed: int = 0
    system_bounds: tuple[tuple[float, float], ...] = ((0.0, 1.0),)
    context_bounds: tuple[tuple[float, float], ...] = ()
    batch_size: int = 2
    n_initial: int = 5
    inference: str = "laplace"
    reference_context: tuple[float, ...] | None = None
    n_candidates: int = 128
    n_starts: int = 2
    n_thompson_features: int = 512

    def __post_init__(self):
        self._check_box()
        allowed = CONTEXTUAL_RULES if self.context_bounds else DUEL_RULES
        if self.rule not in allowed:
            if self.rule in DUEL_RULES + CONTEXTUAL_RULES:
                need = "without a context (no context_bounds)" if self.context_bounds == () else "with context_bounds"
                raise ValueError(f"rule {self.rule!r} is not available {need}; choose one of: {', '.join(allowed)}")
            raise ValueError(f"unknown rule {self.rule!r}; choose one of: {', '.join(allowed)}")
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "batch_size", _positive_int("batch_size", self.batch_size, 2))
        if self.batch_size > 2 and self.rule not in BATCH_RULES:
            raise ValueError(
                f"rule {self.rule!r} proposes duels only (batch_size 2); batch rules: {', '.join(BATCH_RULES)}"
            )
        object.__setattr__(self, "n_initial", _positive_int("n_initial", self.n_initial, 0))
        if self.inference not in INFERENCE_METHODS:
            raise ValueError(f"inference must be one of {INFERENCE_METHODS}, got {self.inference!r}")
        for name, minimum in (("n_candidates", 1), ("n_starts", 0), ("n_thompson_features", 2)):
            object.__setattr__(self, name, _positive_int(name, getattr(self, name), minimum))


def default_kernel(system_bounds, n_context: int = 0) -> kernels.Kernel:
    """SE utility kernel with lengthscales ``0.2 ×`` each system range (variance 1); with a context,
    ``s s' k(x, x')`` (seed paper §4), so the context scales the strength of a preference."""
    widths = np.array([hi - lo for lo, hi in system_bounds], dtype=float)
    system_dims = tuple(range(n_context, n_context + widths.size))
    se = kernels.SquaredExponential(DEFAULT_LENGTHSCALE_FRACTION * widths, variance=1.0, active_dims=system_dims)
    if n_context == 0:
        return se
    return kernels.benchmark_context_kernel(se, context_dims=tuple(range(n_context)))


def resolve_kernel(kernel, system_bounds, n_context: int = 0) -> tuple[kernels.Kernel, bool]:
    """The utility kernel an optimizer was given, and whether it was given (a saved state keeps a
    given kernel; a default one is rebuilt from the bounds): ``None`` → :func:`default_kernel`, a
    :class:`~lensopt.gp.kernels.Kernel` as is, a record of :func:`kernel_to_dict` rebuilt."""
    if kernel is None:
        return default_kernel(system_bounds, n_context), False
    if isinstance(kernel, dict):
        return kernel_from_dict(kernel), True
    if isinstance(kernel, kernels.Kernel):
        return kernel, True
    raise ValueError(f"kernel must be None, a lensopt Kernel or a saved kernel record; got {type(kernel).__name__}")


# ---- kernels as JSON records --------------------------------------------------------------------
_LEAVES: dict[str, type[_BaseKernel]] = {
    "se": kernels.SquaredExponential,
    "matern32": kernels.Matern32,
    "matern52": kernels.Matern52,
    "linear-context": kernels.LinearContext,
}
_COMPOSITES: dict[str, type[_Composite]] = {"sum": kernels.Sum, "product": kernels.Product}


def kernel_to_dict(kernel: kernels.Kernel) -> dict:
    """A JSON record of a kernel built from SE, Matérn, LinearContext, sums and products."""
    for tag, composite in _COMPOSITES.items():
        if type(kernel) is composite:
            return {"type": tag, "terms": [kernel_to_dict(kernel.k1), kernel_to_dict(kernel.k2)]}
    for tag, leaf in _LEAVES.items():
        if type(kernel) is leaf:
            # _params, _fixed and _bounds_natural: the constructor arguments kept by _BaseKernel
            record: dict[str, Any] = {
                "type": tag,
                "active_dims": None if kernel.active_dims is None else list(kernel.active_dims),
                "fixed": list(kernel._fixed),
                "bounds": {k: list(v) for k, v in kernel._bounds_natural.items()},
            }
            for p in kernel._params:
                record[p.name] = p.value.tolist() if p.value.size > 1 else float(p.value[0])
            return record
    raise ValueError(
        f"cannot save a {type(kernel).__name__} kernel as JSON; use SE, Matérn, LinearContext, sums and products"
    )


def kernel_from_dict(record: dict) -> kernels.Kernel:
    """Rebuild a kernel saved by :func:`kernel_to_dict`."""
    record = dict(record)
    tag = record.pop("type", None)
    if tag in _COMPOSITES:
        first, second = (kernel_from_dict(term) for term in record["terms"])
        return _COMPOSITES[tag](first, second)
    if tag not in _LEAVES:
        raise ValueError(
            f"unknown kernel type {tag!r} in a saved state; known: {sorted(_LEAVES) + sorted(_COMPOSITES)}"
        )
    record["bounds"] = {k: tuple(v) for k, v in (record.get("bounds") or {}).items()}
    record["fixed"] = tuple(record.get("fixed", ()))
    return _LEAVES[tag](**record)
