"""Phoropter lenses: proposed lenses rounded to the phoropter's step, a compared set kept distinct.

A rule proposes lenses anywhere in the box; a phoropter sets sphere and cylinder in steps (0.25 D).
Every refraction optimizer (letters, duels, rankings) rounds its proposals here, so a clinician is
never asked for a lens the phoropter cannot set, and two lenses of one comparison never round to
the same lens. Lenses are ``(sphere_d, cylinder_d)``; ``bounds`` are ``((low, high), (low, high))``
in diopters, in the same order.
"""

from __future__ import annotations

import itertools

import numpy as np

BOUNDS_SLACK_D = 1e-12
"""How far (D) a rounded value may pass a bound before it is moved one step back inside."""


def check_lens_step(lens_step_d) -> float | None:
    """``lens_step_d`` as a float (``None``: no rounding); a one-line ValueError unless positive."""
    if lens_step_d is None:
        return None
    if isinstance(lens_step_d, bool) or not (isinstance(lens_step_d, (int, float)) and lens_step_d > 0):
        raise ValueError(f"lens_step_d must be a positive number of diopters, got {lens_step_d!r}")
    return float(lens_step_d)


def round_to_step_array(values_d, step_d: float | None, bounds_d) -> np.ndarray:
    """Every value of ``values_d`` clipped to ``bounds_d`` ``(low, high)`` and rounded to a multiple
    of ``step_d`` inside them: the nearest multiple (halves to the even multiple), moved one step
    back inside if rounding crossed a bound. ``step_d=None`` only clips. Bounds holding no multiple
    of the step leave a bound (the optimizers refuse such a box: :func:`check_room_for_lenses`).
    Never ``-0.0`` from rounding (a lens is not shown as "-0.00 D"). Clipped first: a value more
    than a step outside bounds that are not multiples of the step (±0.1 D) became the bound itself,
    a lens no phoropter sets."""
    lo, hi = bounds_d
    values = np.minimum(np.maximum(np.asarray(values_d, dtype=float), lo), hi)
    if step_d is not None:
        # to 10 decimals: a multiple of a step not exact in binary (0.3 D) read 3.5999999999999996 in
        # the data; multiples of 0.25 D, 0.125 D are exact and unchanged
        values = np.round(np.round(values / step_d) * step_d, 10) + 0.0
        values = np.where(values > hi + BOUNDS_SLACK_D, values - step_d, values)
        values = np.where(values < lo - BOUNDS_SLACK_D, values + step_d, values)
    return np.minimum(np.maximum(values, lo), hi)


def round_to_step(value_d: float, step_d: float | None, bounds_d) -> float:
    """One value rounded as by :func:`round_to_step_array`."""
    return float(round_to_step_array(value_d, step_d, bounds_d))


def round_lens(lens_d, step_d: float | None, bounds_d) -> tuple[float, float]:
    """``(sphere_d, cylinder_d)`` each rounded by :func:`round_to_step` in its own bounds."""
    sphere, cylinder = (round_to_step(v, step_d, b) for v, b in zip(lens_d, bounds_d))
    return sphere, cylinder


def step_away(lens_d, towards_d, step_d: float, bounds_d) -> tuple[float, float]:
    """A lens one step from ``lens_d`` along the column where ``towards_d`` (the rule's unrounded
    proposal) differs most from it, in its direction (the other way at a bound); along the other
    column where neither way fits in that column's bounds (bounds narrower than a step: a
    cylinder kept within ±0.2 D), and ``lens_d`` itself where no step fits at all (the caller then
    looks further, :func:`_nearest_free`). Such bounds had a duel offer ``C +0.25 D`` outside
    ``(-0.2, 0.0)``, which its own ``tell`` then refused."""
    towards = np.asarray(towards_d, dtype=float)
    lens = list(lens_d)
    differences = np.abs(towards - np.asarray(lens_d, dtype=float))
    for column in sorted(range(len(lens)), key=lambda k: -differences[k]):  # the most different first
        lo, hi = bounds_d[column]
        direction = 1.0 if towards[column] >= lens[column] else -1.0
        for way in (direction, -direction):
            if lo - BOUNDS_SLACK_D <= lens[column] + way * step_d <= hi + BOUNDS_SLACK_D:
                lens[column] = float(lens[column] + way * step_d)
                return lens[0], lens[1]
    return lens[0], lens[1]


def _nearest_free(proposal, taken, step_d: float, bounds_d) -> tuple[float, float]:
    """The phoropter lens nearest to ``proposal`` (within a few steps) that is not ``taken``."""
    base = round_lens(proposal, step_d, bounds_d)
    for reach in range(1, 5):
        grid = []
        for dS, dC in itertools.product(range(-reach, reach + 1), repeat=2):
            S, C = base[0] + dS * step_d, base[1] + dC * step_d
            (slo, shi), (clo, chi) = bounds_d
            if slo - BOUNDS_SLACK_D <= S <= shi + BOUNDS_SLACK_D and clo - BOUNDS_SLACK_D <= C <= chi + BOUNDS_SLACK_D:
                lens = (float(min(max(S, slo), shi)), float(min(max(C, clo), chi)))
                if lens not in taken:
                    grid.append((float(np.hypot(S - proposal[0], C - proposal[1])), lens))
        if grid:
            return min(grid)[1]
    raise ValueError(f"no {len(taken) + 1} distinct lenses {step_d:g} D apart fit in the bounds {bounds_d}")


def distinct_phoropter_lenses(proposals_d, step_d: float | None, bounds_d) -> tuple[tuple[float, float], ...]:
    """Each proposed lens rounded (:func:`round_lens`), in order, none equal to an earlier one.

    A lens that rounds onto an earlier one moves one step towards its proposal (:func:`step_away`);
    if that lens is taken too (three or more lenses), it becomes the nearest free phoropter lens.
    Two lenses thus round exactly as the duel optimizer always has. Without a step the proposals
    are only clipped to the bounds (the rules already propose distinct points).
    """
    proposals = [tuple(float(v) for v in p) for p in proposals_d]
    out: list[tuple[float, float]] = []
    for proposal in proposals:
        lens = round_lens(proposal, step_d, bounds_d)
        if step_d is not None and lens in out:
            lens = step_away(lens, proposal, step_d, bounds_d)
            if lens in out:
                lens = _nearest_free(proposal, out, step_d, bounds_d)
        out.append(lens)
    return tuple(out)


def check_room_for_lenses(n_lenses: int, step_d: float | None, bounds_d, what: str) -> None:
    """A one-line ValueError when the lens box ``bounds_d`` (sphere's, cylinder's) holds fewer than
    ``n_lenses`` different phoropter lenses on ``step_d`` — ``what`` (``"a duel"``) shows that many
    at once: a sphere of (0.1, 0.35) D by a cylinder of (-0.1, 0.0) D holds one 0.25 D lens, and the
    session failed at its first trial instead of at its start; a sphere of (0.05, 0.2) D holds none,
    and a letter search asked for S +0.20 D. Without a step every lens fits."""
    try:
        box = np.asarray(bounds_d, dtype=float)
    except (TypeError, ValueError):
        return  # bounds the box's own check refuses in its own words
    if step_d is None or box.shape != (2, 2) or not (np.isfinite(box).all() and (box[:, 0] < box[:, 1]).all()):
        return
    counts = [
        max(0, int(np.floor((hi + BOUNDS_SLACK_D) / step_d) - np.ceil((lo - BOUNDS_SLACK_D) / step_d)) + 1)
        for lo, hi in bounds_d
    ]
    room = counts[0] * counts[1]
    if room < n_lenses:
        (slo, shi), (clo, chi) = bounds_d
        held = "no phoropter lens" if room == 0 else f"{room} phoropter lens{'' if room == 1 else 'es'}"
        shows = f", and {what} shows {n_lenses} different ones" if n_lenses > 1 else ""
        raise ValueError(
            f"sphere_bounds_d ({slo:g}, {shi:g}) by cylinder_bounds_d ({clo:g}, {chi:g}) hold {held} on a "
            f"{step_d:g} D step{shows}: widen the bounds"
        )
