"""A query of any lensopt optimizer, and its answer, as flat columns for a wide CSV.

One number or word a cell, never a list or JSON: a lens is ``sphere_d``, ``cylinder_d`` (and
``axis_deg`` when the optimizer gives one); the lenses of a duel or a ranking are numbered as the
screen numbers them, from 1 (``lens_1_sphere_d``, ``lens_2_sphere_d``...); a ranking's answer is the
lens number at each rank (``rank_1_lens`` the clearest). The benchmark-level optimizers' points are
``context1``..., ``system1``... and ``member1_system1``....

The query types are recognized by their fields (duck typing), so this module imports no optimizer.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def _number(value) -> float:
    return float(value)


def _lens_columns(prefix: str, lens) -> dict[str, float]:
    """``lens``: a :class:`lensopt.refraction.lens.Lens` or a ``(sphere_d, cylinder_d)`` pair."""
    if hasattr(lens, "sphere_d"):
        columns = {f"{prefix}sphere_d": _number(lens.sphere_d), f"{prefix}cylinder_d": _number(lens.cylinder_d)}
        if getattr(lens, "axis_deg", None) is not None:
            columns[f"{prefix}axis_deg"] = _number(lens.axis_deg)
        return columns
    sphere_d, cylinder_d = lens
    return {f"{prefix}sphere_d": _number(sphere_d), f"{prefix}cylinder_d": _number(cylinder_d)}


def _vector_columns(prefix: str, values) -> dict[str, float]:
    return {f"{prefix}{k}": _number(v) for k, v in enumerate(np.ravel(values), start=1)}


def query_columns(query) -> dict[str, Any]:
    """The columns of ``query`` (what an optimizer's ``ask()`` returned), in a stable order.

    - a letter ``Trial``: ``letter_logmar``, ``sphere_d``, ``cylinder_d`` (``axis_deg`` in the full
      prescription search);
    - a ``DuelTrial`` or ``PrescriptionDuelTrial``: ``letter_logmar``, ``lens_1_*``, ``lens_2_*``;
    - a ``RankingTrial`` or ``PrescriptionRankingTrial``: ``letter_logmar``, ``lens_1_*``... one per
      lens (with ``lens_k_axis_deg`` in the full prescription);
    - a binary ``Query``: ``context1``..., ``system1``...;
    - a ``DuelQuery`` or ``RankingQuery``: ``context1``..., ``member1_system1``....
    """
    if hasattr(query, "lenses_d") or hasattr(query, "lenses"):  # RankingTrial, PrescriptionRankingTrial
        columns: dict[str, Any] = {"letter_logmar": _number(query.letter_logmar)}
        lenses = query.lenses_d if hasattr(query, "lenses_d") else query.lenses
        for k, lens in enumerate(lenses, start=1):
            columns.update(_lens_columns(f"lens_{k}_", lens))
        return columns
    if hasattr(query, "first_lens_d") or hasattr(query, "first_lens"):  # DuelTrial, PrescriptionDuelTrial
        first = getattr(query, "first_lens_d", None) or query.first_lens
        second = getattr(query, "second_lens_d", None) or query.second_lens
        return {
            "letter_logmar": _number(query.letter_logmar),
            **_lens_columns("lens_1_", first),
            **_lens_columns("lens_2_", second),
        }
    if hasattr(query, "letter_logmar") and hasattr(query, "sphere_d"):  # Trial
        return {"letter_logmar": _number(query.letter_logmar), **_lens_columns("", query)}
    if hasattr(query, "members"):  # DuelQuery, RankingQuery
        columns = _vector_columns("context", query.context)
        for i, member in enumerate(np.asarray(query.members), start=1):
            columns.update(_vector_columns(f"member{i}_system", member))
        return columns
    if hasattr(query, "system"):  # binary Query
        return {**_vector_columns("context", query.context), **_vector_columns("system", query.system)}
    raise TypeError(f"no columns for a query of type {type(query).__name__}: not a lensopt optimizer's query")


def _scalar(value) -> Any:
    """A cell: bools as 1/0 (a numeric column), numbers as themselves, anything else as text."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return str(value)


def recorded_answer(optimizer, answer):
    """``answer`` as the handler records it: in the optimizer's own spelling when it has one
    (``canonical_answer``: a duel's ``"first"``/``"second"``/``"same"`` from True/1/"first"..., a
    ranking's whole order), a letter's as True/False, a numpy scalar or 0-d array as a Python value.
    Raises the optimizer's ValueError for an answer it cannot spell — before anything is told."""
    canonical = getattr(optimizer, "canonical_answer", None)
    if callable(canonical):
        return canonical(answer)
    if (isinstance(answer, np.ndarray) and answer.ndim == 0) or isinstance(answer, np.generic):
        answer = answer.item()
    letters = tuple(getattr(optimizer, "SPECULATIVE_ANSWERS", ())) == (True, False)
    if letters:  # a letter named right or wrong: nothing else (None, [True]: a TypeError deep inside,
        if isinstance(answer, numbers.Real) and answer in (0, 1):  # or a column of its own)
            return bool(answer)
        raise ValueError(f"correct must be True or False (or 1 or 0), got {answer!r}")
    return answer


def answer_columns(query, answer) -> dict[str, Any]:
    """The columns of ``answer`` to ``query``.

    ``response``: a letter named correctly (1/0), a duel's ``"first"``/``"second"``/``"same"``, a
    binary 0/1, a ranking's ``"same"``. An ordering (a ranking: indices, clearest first) becomes
    ``rank_1_lens``, ``rank_2_lens``... — the lens numbers (from 1) at each rank (``rank_1_member``...
    for a benchmark ``RankingQuery``). Any other sequence: ``response_1``, ``response_2``....
    """
    if isinstance(answer, (str, bool, np.bool_, numbers.Number)):
        return {"response": _scalar(answer)}
    values = list(answer)
    is_order = all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values)
    if is_order and (hasattr(query, "lenses_d") or hasattr(query, "lenses") or hasattr(query, "members")):
        unit = "member" if hasattr(query, "members") else "lens"
        return {f"rank_{r}_{unit}": int(v) + 1 for r, v in enumerate(values, start=1)}
    return {f"response_{k}": _scalar(v) for k, v in enumerate(values, start=1)}


__all__ = ["answer_columns", "query_columns", "recorded_answer"]
