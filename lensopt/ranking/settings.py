"""Settings of the ranking optimizer: frozen, validated, JSON round-trippable.

Columns: context first (at most one, e.g. the letter size), then the system parameters.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from lensopt.ranking.acquisition import MAXIMIZER_CANDIDATES, MPES_SAMPLES, N_MAXIMIZERS
from lensopt.ranking.likelihood import TIE_THRESHOLD_BOUNDS
from lensopt.ranking.model import DEFAULT_TIE_THRESHOLD
from lensopt.ranking.variational import GAUSS_HERMITE_POINTS

RANKING_RULES = ("mpes", "random")
"""``mpes``: members by MPES at ``s₀``, then the context by information; ``random``: uniform queries."""

MAX_SET_SIZE = max(GAUSS_HERMITE_POINTS) + 1
"""Largest compared set: the ELBO integrates over ``m − 1`` differences by a product rule."""


def _pairs(name, value, allow_empty=False):
    try:
        pairs = tuple((float(lo), float(hi)) for lo, hi in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of (low, high) pairs, got {value!r}") from None
    if not pairs and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    for i, (lo, hi) in enumerate(pairs):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"{name}[{i}] must be finite, got ({lo}, {hi})")
        if lo >= hi:
            raise ValueError(f"{name}[{i}] is reversed or empty: low {lo} must be < high {hi}")
    return pairs


def _integer(name, value, minimum, maximum=None):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum or (
        maximum is not None and value > maximum
    ):
        allowed = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise ValueError(f"{name} must be an integer {allowed}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class RankingSettings:
    """Everything that determines a ranking optimizer's choices, apart from its kernel and history.

    ``set_size``: members per query (``m``); ``top_k``: members the patient ranks (1 = picks the
    best); ``allow_ties``: the patient may answer "same" (then ``top_k`` must be 1); ``n_initial``:
    uniform random queries before MPES takes over; ``reference_context``: ``s₀`` (None: the upper
    context bound); ``tie_threshold``: δ (start value when learned); ``learn_tie_threshold`` /
    ``learn_kernel``: maximize the ELBO over δ / the kernel's hyperparameters too;
    ``n_candidate_sets``: quasi-random sets scored by MPES per search stage; ``n_maximizers``,
    ``n_mpes_samples``: ``|X*|`` and ``n`` of MPES.
    """

    rule: str = "mpes"
    seed: int = 0
    system_bounds: tuple[tuple[float, float], ...] = ((0.0, 1.0),)
    context_bounds: tuple[tuple[float, float], ...] = ()
    set_size: int = 2
    top_k: int = 1
    allow_ties: bool = True
    n_initial: int = 5
    reference_context: tuple[float, ...] | None = None
    tie_threshold: float = DEFAULT_TIE_THRESHOLD
    learn_tie_threshold: bool = True
    learn_kernel: bool = False
    n_candidate_sets: int = 128
    n_maximizers: int = N_MAXIMIZERS
    n_mpes_samples: int = MPES_SAMPLES
    n_maximizer_candidates: int = MAXIMIZER_CANDIDATES

    def __post_init__(self):
        if self.rule not in RANKING_RULES:
            raise ValueError(f"unknown rule {self.rule!r}; choose one of: {', '.join(RANKING_RULES)}")
        object.__setattr__(self, "system_bounds", _pairs("system_bounds", self.system_bounds))
        object.__setattr__(self, "context_bounds", _pairs("context_bounds", self.context_bounds, allow_empty=True))
        if len(self.context_bounds) > 1:
            raise ValueError(
                f"at most one context column is supported (the context step is 1-D); got {len(self.context_bounds)}"
            )
        object.__setattr__(self, "seed", _integer("seed", self.seed, 0))
        object.__setattr__(self, "set_size", _integer("set_size", self.set_size, 2, MAX_SET_SIZE))
        object.__setattr__(self, "top_k", _integer("top_k", self.top_k, 1, self.set_size))
        if not isinstance(self.allow_ties, (bool, np.bool_)):
            raise ValueError(f"allow_ties must be True or False, got {self.allow_ties!r}")
        object.__setattr__(self, "allow_ties", bool(self.allow_ties))
        if self.allow_ties and self.top_k != 1:
            raise ValueError(
                "allow_ties needs top_k=1: rankings with ties are not modelled (Nguyen et al. 2021, Remark 1)"
            )
        object.__setattr__(self, "n_initial", _integer("n_initial", self.n_initial, 0))
        lo, hi = TIE_THRESHOLD_BOUNDS
        if isinstance(self.tie_threshold, bool) or not isinstance(self.tie_threshold, (int, float, np.number)) or not (
            lo <= float(self.tie_threshold) <= hi
        ):
            raise ValueError(f"tie_threshold must be a number in [{lo}, {hi}], got {self.tie_threshold!r}")
        object.__setattr__(self, "tie_threshold", float(self.tie_threshold))
        for name in ("learn_tie_threshold", "learn_kernel"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
            object.__setattr__(self, name, bool(getattr(self, name)))
        for name, minimum in (("n_candidate_sets", 1), ("n_maximizers", 1), ("n_mpes_samples", 16),
                              ("n_maximizer_candidates", 1)):
            object.__setattr__(self, name, _integer(name, getattr(self, name), minimum))
        ref = self.reference_context
        if ref is not None:
            try:
                values = tuple(float(v) for v in np.atleast_1d(np.asarray(ref, dtype=float)))
            except (TypeError, ValueError):
                raise ValueError(f"reference_context must be None or numbers, got {ref!r}") from None
            if len(values) != len(self.context_bounds):
                raise ValueError(
                    f"reference_context has {len(values)} values for {len(self.context_bounds)} context columns"
                )
            for i, (v, (lo, hi)) in enumerate(zip(values, self.context_bounds)):
                if not lo <= v <= hi:
                    raise ValueError(f"reference_context[{i}] = {v} is outside the context bounds [{lo}, {hi}]")
            object.__setattr__(self, "reference_context", values)

    @property
    def n_context(self) -> int:
        return len(self.context_bounds)

    @property
    def n_system(self) -> int:
        return len(self.system_bounds)

    def reference(self) -> np.ndarray:
        """``s₀`` ``(n_context,)``: the given reference context, else the upper context bound."""
        if self.reference_context is not None:
            return np.array(self.reference_context, dtype=float)
        return np.array([hi for _, hi in self.context_bounds], dtype=float)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["system_bounds"] = [list(b) for b in self.system_bounds]
        data["context_bounds"] = [list(b) for b in self.context_bounds]
        if self.reference_context is not None:
            data["reference_context"] = list(self.reference_context)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> RankingSettings:
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown ranking setting(s): {', '.join(sorted(unknown))}")
        return cls(**data)
