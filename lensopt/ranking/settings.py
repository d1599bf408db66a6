"""Settings of the ranking optimizer: frozen, validated, JSON round-trippable.

Columns: context first (at most one, e.g. the letter size), then the system parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lensopt.binary.settings import check_seed
from lensopt.boxes import BoxSettings
from lensopt.ranking.acquisition import MAXIMIZER_CANDIDATES, MPES_SAMPLES, N_MAXIMIZERS
from lensopt.ranking.likelihood import TIE_THRESHOLD_BOUNDS
from lensopt.ranking.model import DEFAULT_TIE_THRESHOLD
from lensopt.ranking.variational import GAUSS_HERMITE_POINTS

RANKING_RULES = ("mpes", "random")
"""``mpes``: members by MPES at ``s₀``, then the context by information; ``random``: uniform queries."""

MAX_SET_SIZE = max(GAUSS_HERMITE_POINTS) + 1
"""Largest compared set: the ELBO integrates over ``m − 1`` differences by a product rule."""


def check_integer(name, value, minimum, maximum=None):
    """``value`` as an int, or a one-line ValueError naming ``name`` when it is not an integer (a bool
    is not) in ``minimum``..``maximum``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        allowed = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise ValueError(f"{name} must be an integer {allowed}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class RankingSettings(BoxSettings):
    """Everything that determines a ranking optimizer's choices, apart from its kernel and history.

    ``set_size``: members per query (``m``); ``top_k``: members the patient ranks (1 = picks the
    best); ``allow_ties``: the patient may answer "same" (then ``top_k`` must be 1); ``n_initial``:
    uniform random queries before MPES takes over; ``reference_context``: ``s₀`` (None: the upper
    context bound); ``tie_threshold``: δ (start value when learned); ``learn_tie_threshold`` /
    ``learn_kernel``: maximize the ELBO over δ / the kernel's hyperparameters too;
    ``n_candidate_sets``: quasi-random sets scored by MPES per search stage; ``n_maximizers``,
    ``n_mpes_samples``: ``|X*|`` and ``n`` of MPES.
    """

    setting_name = "ranking setting"

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
        self._check_box()
        if len(self.context_bounds) > 1:
            raise ValueError(
                f"at most one context column is supported (the context step is 1-D); got {len(self.context_bounds)}"
            )
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "set_size", check_integer("set_size", self.set_size, 2, MAX_SET_SIZE))
        object.__setattr__(self, "top_k", check_integer("top_k", self.top_k, 1, self.set_size))
        if not isinstance(self.allow_ties, (bool, np.bool_)):
            raise ValueError(f"allow_ties must be True or False, got {self.allow_ties!r}")
        object.__setattr__(self, "allow_ties", bool(self.allow_ties))
        if self.allow_ties and self.top_k != 1:
            raise ValueError(
                "allow_ties needs top_k=1: rankings with ties are not modelled (Nguyen et al. 2021, Remark 1)"
            )
        object.__setattr__(self, "n_initial", check_integer("n_initial", self.n_initial, 0))
        lo, hi = TIE_THRESHOLD_BOUNDS
        if (
            isinstance(self.tie_threshold, bool)
            or not isinstance(self.tie_threshold, (int, float, np.number))
            or not (lo <= float(self.tie_threshold) <= hi)
        ):
            raise ValueError(f"tie_threshold must be a number in [{lo}, {hi}], got {self.tie_threshold!r}")
        object.__setattr__(self, "tie_threshold", float(self.tie_threshold))
        for name in ("learn_tie_threshold", "learn_kernel"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
            object.__setattr__(self, name, bool(getattr(self, name)))
        for name, minimum in (
            ("n_candidate_sets", 1),
            ("n_maximizers", 1),
            ("n_mpes_samples", 16),
            ("n_maximizer_candidates", 1),
        ):
            object.__setattr__(self, name, check_integer(name, getattr(self, name), minimum))
