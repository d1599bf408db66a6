"""Whether the patient ever read through the lens a session reports.

A letter search reports the lens its model puts at the best acuity, which need not be a lens it
tried: the acuity-law optimizer asks its trials where acuity changes fastest, often half a
diopter or more from its optimum, and reports the optimum from the law (docs/never-lost.md); the
full prescription's bracketing rule tries lenses 0.35 and 0.7 D either side of its best. The
predicted acuity through such a lens is then the model's, not an answer's, and a clinician checks
it on the chart before prescribing. The closing console and the log (:func:`untried_note`), the
printed record (:func:`untried_short`) and the dashboard (:func:`untried_summary`) say so by one
rule, :func:`untried_d`.

"Tried" means within a phoropter step: some lens the patient answered through (an answer undone
is not counted: the model was not told it) lies within :data:`TRIED_WITHIN_D` of the reported one
in dioptric distance — the length of the power-vector difference, which is Raasch's blur of the
residual (METHOD.md §1; 0.25 D of it costs 0.026 logMAR, about the stopping rule's tolerance).
A lens tried only with letters far larger than its predicted acuity (a first trial's large
letter, read through a lens the search left at once) was tried, but its acuity was not measured:
what was read says only that large letters are seen through it (:attr:`ReadThrough.measured`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from lensopt.refraction.acuity_text import logmar_text, signed_logmar
from lensopt.refraction.lens import diopter_text, power_vector_arrays

#: How near (D, dioptric distance) a lens tried must be for the reported lens to count as tried:
#: one phoropter step.
TRIED_WITHIN_D = 0.25

#: How much larger (logMAR) than a lens's predicted acuity a letter read through it may be for
#: that acuity to count as measured (:attr:`ReadThrough.measured`): three lines of a chart. Not
#: two: the stopping rule's check (``[stop] check_letters``) asks its letters where they say most,
#: about two lines above the predicted acuity (chosen on tuning patients), and at two lines a lens
#: just checked could be called "not measured; check it on the chart".
MEASURED_WITHIN_LOGMAR = 0.3

#: The meridian of a two-parameter search without ``--axis`` (every lens on the same one).
NO_AXIS_MERIDIAN_DEG = 180.0


def _distances_d(
    sphere_d: float, cylinder_d: float, axis_deg: float | None, trials: Iterable, meridian_deg: float | None
) -> np.ndarray:
    """The dioptric distance (D) between the lens and each lens of ``trials`` (:func:`nearest_tried_d`)."""
    meridian = meridian_deg if meridian_deg else NO_AXIS_MERIDIAN_DEG
    lens_axis = meridian if axis_deg is None else float(axis_deg)
    tried = [(t.sphere_d, t.cylinder_d, meridian if t.axis_deg is None else t.axis_deg) for t in trials]
    return lens_distances_d(tried, (sphere_d, cylinder_d, lens_axis))


def lens_distances_d(tried, lens) -> np.ndarray:
    """The dioptric distances (D) between the lenses ``tried`` (``(n, 3)``: sphere, cylinder, axis)
    and ``lens`` ``(sphere_d, cylinder_d, axis_deg)``: the lengths of their power vectors' differences."""
    tried = np.asarray(tried, dtype=float).reshape(-1, 3)
    target = np.array(power_vector_arrays(*lens), dtype=float)
    vectors = np.column_stack(power_vector_arrays(tried[:, 0], tried[:, 1], tried[:, 2])).reshape(-1, 3)
    return np.sqrt(np.square(vectors - target).sum(axis=1))


def _within_step(distance_d: float) -> bool:
    """Whether a distance is within :data:`TRIED_WITHIN_D` as written (to 0.01 D by
    :func:`diopter_text`: a lens "0.25 D away" counts as tried)."""
    return float(diopter_text(distance_d, signed=False)) <= TRIED_WITHIN_D


def nearest_tried_d(
    sphere_d: float, cylinder_d: float, axis_deg: float | None, trials: Iterable, meridian_deg: float | None = None
) -> float | None:
    """The dioptric distance (D) between the lens ``sphere_d / cylinder_d x axis_deg`` and the nearest
    lens of ``trials`` (anything with ``sphere_d``, ``cylinder_d`` and ``axis_deg``: a
    :class:`~lensopt.refraction.trial.Trial` or a stored trial); None without trials.

    A two-parameter search's trials have no axis: their cylinder lies along the session's
    ``meridian_deg`` (the protocol's ``[lens] axis_deg``; None or 0: none given, one common meridian),
    whatever axis the reported lens is written at (a plus cylinder stored transposed, 90° away)."""
    distances = _distances_d(sphere_d, cylinder_d, axis_deg, trials, meridian_deg)
    return float(distances.min()) if len(distances) else None


def letters_through(
    sphere_d: float,
    cylinder_d: float,
    axis_deg: float | None,
    trials: Iterable,
    meridian_deg: float | None = None,
    largest_logmar: float | None = None,
) -> int:
    """How many of ``trials`` were read through the lens: through a lens within
    :data:`TRIED_WITHIN_D` of it (:func:`nearest_tried_d`'s arguments) and, with ``largest_logmar``,
    at a letter no larger than it — what a stopping rule's ``check_letters`` counts
    (:class:`lensopt.stopping.StopRule`, :mod:`lensopt.refraction.lens_check`)."""
    trials = list(trials)
    through = _through(_distances_d(sphere_d, cylinder_d, axis_deg, trials, meridian_deg))
    if largest_logmar is not None:
        through &= np.array([t.letter_logmar <= largest_logmar + 1e-9 for t in trials], dtype=bool)
    return int(through.sum())


def _through(distances_d: np.ndarray) -> np.ndarray:
    """Which distances are within a phoropter step as written (:func:`_within_step`; the text rule
    asked only of those near the edge, the rest decided by the number)."""
    return np.array([d < 2.0 * TRIED_WITHIN_D and _within_step(d) for d in distances_d], dtype=bool)


@dataclass(frozen=True)
class ReadThrough:
    """What the patient read through a lens (through lenses within :data:`TRIED_WITHIN_D` of it):
    ``right`` of ``letters`` named right, at letter sizes from ``smallest_logmar`` to
    ``largest_logmar`` — the acuity measured through it, beside the model's prediction
    ``predicted_logmar`` (None: not known), when :attr:`measured`."""

    letters: int
    right: int
    smallest_logmar: float
    largest_logmar: float
    predicted_logmar: float | None = None

    @property
    def measured(self) -> bool:
        """Whether a letter read through the lens was at most :data:`MEASURED_WITHIN_LOGMAR` larger
        than its predicted acuity, so that acuity was measured, not only predicted (True when no
        prediction is known). ``1 of 1 right at +0.96 logMAR`` through a lens predicted to give
        +0.01 logMAR says only that large letters are seen through it."""
        if self.predicted_logmar is None:
            return True
        return self.smallest_logmar <= self.predicted_logmar + MEASURED_WITHIN_LOGMAR + 1e-9

    def sizes_text(self) -> str:
        low, high = signed_logmar(self.smallest_logmar), signed_logmar(self.largest_logmar)
        return logmar_text(self.smallest_logmar) if low == high else f"{low} to {high} logMAR"

    def note(self) -> str:
        """The closing console's and the log's line: ``read through this lens: 4 of 5 letters
        right, at +0.10 to +0.18 logMAR``; a lens read only with letters far larger than its
        predicted acuity (not :attr:`measured`) is to be checked on the chart."""
        read = f"{self.right} of {self.letters} {_letters(self.letters)} right, at {self.sizes_text()}"
        if self.measured:
            return f"read through this lens: {read}"
        return (
            f"read through this lens only with letters far larger than its predicted acuity ({read}), so its "
            "acuity is predicted, not measured; check it on the chart"
        )

    def short(self) -> str:
        """:meth:`note` in the width of an eye's column of the printed record."""
        if self.measured:
            return f"read {self.right} of {self.letters} right through it, {self.sizes_text()}"
        return f"not measured: read through it only at {self.sizes_text()}; check it on the chart"


def _letters(n: int) -> str:
    return "letter" if n == 1 else "letters"


def read_through(
    sphere_d: float,
    cylinder_d: float,
    axis_deg: float | None,
    answers: Iterable[tuple],
    meridian_deg: float | None = None,
    predicted_logmar: float | None = None,
) -> ReadThrough | None:
    """What the patient read through the lens (:class:`ReadThrough`), from ``answers`` — pairs of a
    trial (as :func:`nearest_tried_d` takes) and whether it was named right — or None when no
    answer was through it (:func:`untried_d` then says how far the nearest was).
    ``predicted_logmar``: the acuity predicted through the lens, if known (whether it was measured)."""
    answers = list(answers)
    if not answers:
        return None
    distances = _distances_d(sphere_d, cylinder_d, axis_deg, (t for t, _ in answers), meridian_deg)
    through = [answer for answer, inside in zip(answers, _through(distances)) if inside]
    if not through:
        return None
    sizes = [float(t.letter_logmar) for t, _ in through]
    predicted = None if predicted_logmar is None or not np.isfinite(predicted_logmar) else float(predicted_logmar)
    return ReadThrough(len(through), sum(bool(c) for _, c in through), min(sizes), max(sizes), predicted)


def untried_d(
    sphere_d: float, cylinder_d: float, axis_deg: float | None, trials: Iterable, meridian_deg: float | None = None
) -> float | None:
    """:func:`nearest_tried_d` when it is beyond :data:`TRIED_WITHIN_D` as written (to 0.01 D: a
    lens "0.25 D away" counts as tried), else None — the one rule of every place that says so."""
    distance_d = nearest_tried_d(sphere_d, cylinder_d, axis_deg, trials, meridian_deg)
    if distance_d is None or _within_step(distance_d):
        return None
    return distance_d


def untried_note(distance_d: float | None) -> str | None:
    """The closing console's and the log's sentence on a lens not tried (``distance_d`` from
    :func:`untried_d`), or None."""
    if distance_d is None:
        return None
    return (
        f"this lens was not tried: the nearest lens the patient read through is {diopter_text(distance_d, False)} D "
        "from it, so its acuity is predicted, not measured; check it on the chart"
    )


def untried_short(distance_d: float | None) -> str | None:
    """:func:`untried_note` in the width of an eye's column of the printed record, or None."""
    return None if distance_d is None else f"not tried; nearest tried {diopter_text(distance_d, False)} D away"


def untried_summary(distance_d: float | None) -> str | None:
    """:func:`untried_note` under the dashboard's predicted acuity, or None."""
    if distance_d is None:
        return None
    return f"predicted, not measured: the nearest lens tried is {diopter_text(distance_d, False)} D from this one"


#: Why a duel or ranking search of sphere and cylinder (no start) ends with its best lens, not a
#: prescription — as the closing console, the dashboard, ``lensopt sessions``, the JSON export and
#: the printed record say it.
COMPARISON_WITHOUT_START = (
    "a sphere-and-cylinder search by comparisons reports no prescription; the full prescription comes "
    "from a session with a start (clinical-prescription-duel or -ranking --start RX)"
)

#: A best lens within this distance (D) of the lens box's edge is reported with a warning.
BOX_EDGE_D = 0.125


def box_edges(best_d, sphere_bounds_d, cylinder_bounds_d) -> list[str]:
    """The edges of the lens box a lens ``(sphere_d, cylinder_d)`` lies on (within
    :data:`BOX_EDGE_D`): ``["sphere -4.00 D"]``; none inside the box."""
    return [
        f"{name} {diopter_text(value)} D"
        for name, value, (low, high) in zip(("sphere", "cylinder"), best_d, (sphere_bounds_d, cylinder_bounds_d))
        if min(value - low, high - value) <= BOX_EDGE_D
    ]


def box_edge_warning(best_d, sphere_bounds_d, cylinder_bounds_d) -> str:
    """A two-parameter comparison's best lens ``(sphere_d, cylinder_d)`` on the edge of the lens box
    (after a few duels the model's best can sit in a corner, S -4.00 D C +4.00 D): a warning that
    names the edge and what to do; "" inside the box. The closing console, the log and the dashboard
    say it."""
    edges = box_edges(best_d, sphere_bounds_d, cylinder_bounds_d)
    if not edges:
        return ""
    return (
        f"warning: the best lens is on the edge of the lens box ({', '.join(edges)}): the search may not have "
        "found the patient's lens; run more comparisons (lensopt run --resume N --trials M) or check the box"
    )
