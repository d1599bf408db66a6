"""Ranking observations: a compared set of inputs and what the patient answered.

An observation holds the full inputs ``[s, x]`` of the ``m`` compared members ``(m, n_context +
n_system)`` (the context repeated on every row), the outcome — an ordering of member indices, best
first, or :data:`~lensopt.ranking.likelihood.TIE` — and whether the patient could answer "same"
(``ties_allowed``: then a single winner follows eq. 1 with the threshold δ, otherwise δ = 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from lensopt.ranking.likelihood import TIE


def parse_outcome(outcome, m: int, ties_allowed: bool) -> str | tuple[int, ...]:
    """Validate an answer to a query of ``m`` members; return a tuple of indices or :data:`TIE`.

    Accepted: :data:`TIE` (``"same"``, only with ties allowed); one member index (the single best);
    a sequence of distinct member indices, best first (with ties allowed: exactly one).
    """
    if isinstance(outcome, str):
        if outcome != TIE:
            raise ValueError(f"unknown outcome {outcome!r}; give {TIE!r}, a member index or an ordering of indices")
        if not ties_allowed:
            raise ValueError(f"outcome {TIE!r} needs a query with ties allowed (allow_ties=True)")
        return TIE
    order: tuple[int, ...]
    if _is_index(outcome):
        order = (int(outcome),)
    elif isinstance(outcome, (Sequence, np.ndarray)) and not isinstance(outcome, bytes):
        items = list(outcome.reshape(-1)) if isinstance(outcome, np.ndarray) else list(outcome)
        if not items:
            raise ValueError("an ordering must name at least one member (the best)")
        if not all(_is_index(i) for i in items):
            raise ValueError(f"an ordering must list integer member indices; got {outcome!r}")
        order = tuple(int(i) for i in items)
    else:
        raise ValueError(f"outcome must be {TIE!r}, a member index or an ordering of indices; got {outcome!r}")
    if any(not 0 <= i < m for i in order):
        raise ValueError(f"member indices must be in 0..{m - 1}; got {order}")
    if len(set(order)) != len(order):
        raise ValueError(f"an ordering must not repeat a member; got {order}")
    if ties_allowed and len(order) != 1:
        raise ValueError(
            "with ties allowed the outcome is one member index or 'same' "
            "(top-k rankings with ties are not modelled: Nguyen et al. 2021, Remark 1)"
        )
    return order


def _is_index(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True, eq=False)
class RankingObservation:
    """One answered query: ``inputs`` ``(m, n_dims)``, ``outcome`` and ``ties_allowed``."""

    inputs: np.ndarray
    outcome: object
    ties_allowed: bool = False

    def __post_init__(self):
        inputs = np.array(self.inputs, dtype=float)
        if inputs.ndim != 2 or inputs.shape[0] < 2:
            raise ValueError(f"inputs must be (m >= 2, n_dims); got shape {inputs.shape}")
        if not np.all(np.isfinite(inputs)):
            raise ValueError("inputs must be finite")
        if len({row.tobytes() for row in inputs}) != inputs.shape[0]:
            raise ValueError("the compared inputs must be distinct (comparing a member with itself says nothing)")
        inputs.setflags(write=False)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "ties_allowed", bool(self.ties_allowed))
        object.__setattr__(self, "outcome", parse_outcome(self.outcome, inputs.shape[0], self.ties_allowed))

    @property
    def m(self) -> int:
        return self.inputs.shape[0]

    @property
    def kind(self) -> str:
        """``"tie"``, ``"choice"`` (one winner, eq. 1 with δ) or ``"rank"`` (Plackett–Luce, δ = 0)."""
        if self.outcome == TIE:
            return "tie"
        return "choice" if self.ties_allowed else "rank"

    def canonical_order(self) -> tuple[int, ...]:
        """Member indices with the ranked ones first, best first (all members for a tie)."""
        if self.outcome == TIE:
            return tuple(range(self.m))
        order = cast(tuple[int, ...], self.outcome)  # not TIE: parse_outcome's member indices
        return tuple(order) + tuple(j for j in range(self.m) if j not in order)

    def to_record(self) -> dict:
        outcome = self.outcome if self.outcome == TIE else list(cast(tuple[int, ...], self.outcome))
        return {"inputs": self.inputs.tolist(), "outcome": outcome, "ties_allowed": self.ties_allowed}

    @classmethod
    def from_record(cls, record: dict) -> RankingObservation:
        outcome = record["outcome"]
        if isinstance(outcome, list):
            outcome = tuple(outcome)
        return cls(record["inputs"], outcome, record.get("ties_allowed", False))
