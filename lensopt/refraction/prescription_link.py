"""The full prescription's duels through the acuity link (``clarity_link="acuity"``).

The probit duel model (:mod:`lensopt.refraction.prescription_duels`) lets two lenses differ as much at
any letter size; a patient whose clarity saturates — both lenses read perfectly at large letters, both
give guesses at small ones — then answers "the same" or at random at the letter sizes that model
asks for most (the bounds), and the model, reading those answers as equal clarity everywhere, lets
the most-plus tilt carry the lens away. On tuning patients (clinic patients of seeds 5000–5039,
slope 14, an autorefraction start, 40 duels, "the same" below 1 logit unit) who lapse 2 % of the
time, the probit model's median blur error grew from 0.65 D after 10 duels to 1.13 D after 40, 34
of 40 sessions more than 0.5 D off; no letter bounds, letter lengthscale or tilt mended it.

Here the model is the letter task's (:class:`lensopt.preference.link.AcuityLinkDuelGP`): the latent
``f(s, x) ≈ a (s − VA(x))`` with the acuity law as its prior mean about the start
(:class:`lensopt.gp.mean.AcuityLawMean`, slope :data:`LINK_SLOPE`), a kernel
``θ s s' + σ_c² + σ² k_SE(x, x')`` (:func:`link_kernel`: the slope, the level and the lens's own
shape uncertain), the clarity ``h(f) = Φ⁻¹(γ + (1 − γ − λ) Φ(f))`` compared. The duel is chosen by
its information: the champion (the tilted optimum, as before) against the challenger and the letter
size, jointly, of largest BALD (:func:`choose_challenger`), so that the letters sit near the
threshold of the lenses compared; the letter size is chosen again for the two phoropter lenses
actually shown. There are no random first duels (``n_initial`` is not used): the prior about the
start already makes the first duel informative. The model is refitted from the prior on every
answer, so a resumed session decides as the uninterrupted one.
"""

from __future__ import annotations

import numpy as np

from lensopt.gp.kernels import LinearContext, SquaredExponential
from lensopt.gp.mean import AcuityLawMean
from lensopt.preference.link import FIRST, SAME, SECOND, AcuityLinkDuelGP, AcuityLinkRankingGP
from lensopt.refraction.prescription_comparisons import PrescriptionComparisons, pull_within
from lensopt.threads import single_threaded

#: Models of the clarity compared in a duel: ``acuity`` (this module; the default) and ``linear``
#: (the probit utility of the papers; sessions saved before the acuity link rebuild with it).
CLARITY_LINKS = ("acuity", "linear")

#: The acuity law of the prior mean: psychometric slope ``a`` (logMAR⁻¹, a human slope) and best
#: acuity (logMAR) of a patient whose correction is the start.
LINK_SLOPE = 14.0
LINK_VA_LOGMAR = 0.0

#: Depth of the prior's bowl about the start (latent units; :data:`LINK_SLOPE`: the acuity law of a
#: patient whose correction is the start).
LINK_BOWL_DEPTH = LINK_SLOPE

#: Prior standard deviations of the kernel's parts (latent units): the slope (30 % of
#: :data:`LINK_SLOPE`, per logMAR), the level (0.15 logMAR of best acuity), the lens's own shape;
#: and the lens lengthscale (D of power vector).
LINK_SLOPE_SD = 0.3 * LINK_SLOPE
LINK_LEVEL_SD = 0.15 * LINK_SLOPE
LINK_LENS_SD = 3.0
LINK_LENS_LENGTHSCALE_D = 1.0

#: The most-plus tilt ``κ`` of the acuity link (latent units per D of M; the probit model's
#: :data:`~lensopt.refraction.prescription_duels.PLUS_PREFERENCE` is on its own utility's scale):
#: the latent falls ``a log10(1 + b²)`` with blur, about 2.8 times as steeply as the probit model's
#: prior bowl. Chosen on tuning patients (clinic patients of seeds 5000–5039, slope 14, an
#: autorefraction start, 40 duels, with and without accommodation) among 2, 4, 5 and 6: mean M error
#: after 40 duels −0.07 / −0.28 D (without / with accommodation) with 2, −0.05 / −0.14 with 4,
#: −0.03 / −0.05 with 5, +0.07 / +0.04 with 6.
LINK_PLUS_PREFERENCE = 5.0

#: A lengthscale (D) far beyond any search box: the level part is a constant over the lenses.
_CONSTANT_LENGTHSCALE_D = 100.0

#: Candidates of the duel: challengers around the champion and letter sizes on a grid over the
#: letter bounds (the size of the shown pair is then chosen on :data:`SIZE_GRID_FINE`).
N_CHALLENGERS = 96
SIZE_GRID = 13
SIZE_GRID_FINE = 64


class AcuityLinkSearch(PrescriptionComparisons):
    """A comparison search of the full prescription (duels, rankings) that can run through the
    acuity link (``clarity_link="acuity"``): its model, fitted from the prior on the whole history
    once per trial count when first needed (the per-trial cache of
    :class:`~lensopt.refraction.prescription_comparisons.PrescriptionComparisons`: ``tell`` fits
    nothing, so a PsychoPy handler's own optimizer is told every answer while a lookahead worker
    decides, and a resumed session fits once), the model hooks on it, and the comparison it asks
    (:meth:`_link_comparison`). A subclass sets ``link_rules`` and ``_link_prior``
    (:func:`link_model`) and fits its history in :meth:`_fit_link_on_history`."""

    _link_prior: AcuityLinkDuelGP
    rule: str
    #: The rules that can run through the link (a subclass's).
    link_rules: tuple[str, ...] = ()

    @classmethod
    def default_clarity_link(cls, rule: str) -> str:
        """The model a ``rule`` runs with by default: the acuity link where it has the rule, the
        probit utility elsewhere."""
        return CLARITY_LINKS[0] if rule in cls.link_rules else "linear"

    def _set_clarity_link(self, clarity_link, n_alternatives, model_lapse, rule) -> None:
        """Validate and set ``clarity_link`` (None: :meth:`default_clarity_link` of ``rule``), the
        link's ``n_alternatives`` and ``model_lapse``; a one-line ValueError for a bad one."""
        clarity_link = self.default_clarity_link(rule) if clarity_link is None else clarity_link
        if clarity_link not in CLARITY_LINKS:
            raise ValueError(f"unknown clarity_link {clarity_link!r}; choose one of: {', '.join(CLARITY_LINKS)}")
        if clarity_link == "acuity" and rule not in self.link_rules:
            raise ValueError(f"clarity_link 'acuity' works with the rules {', '.join(self.link_rules)}; got {rule!r}")
        self.n_alternatives, self.model_lapse = check_link_rates(n_alternatives, model_lapse)
        self.clarity_link = clarity_link

    def _fit_link_on_history(self) -> AcuityLinkDuelGP | None:  # pragma: no cover
        """A copy of ``_link_prior`` fitted on the history (None before a modelled answer)."""
        raise NotImplementedError

    def _fitted_link(self) -> AcuityLinkDuelGP | None:
        """The link fitted on the answers so far (None before a modelled answer)."""
        return self._cached("link", self._fit_link_on_history) if self.n_trials else None

    def _link_now(self) -> AcuityLinkDuelGP:
        """The link fitted on the answers so far (its prior before any)."""
        fitted = self._fitted_link()
        return fitted if fitted is not None else self._link_prior

    def _link_predict(self, X, full_cov=False):
        return self._link_now().predict(X, full_cov=full_cov)

    def _link_mean_and_gradient(self, X):
        return self._link_now().predict_mean_with_gradient(X)

    @single_threaded
    def acuity_logmar(self, power_vectors_d) -> tuple[np.ndarray, np.ndarray]:
        """The acuity threshold (logMAR) through each lens of ``power_vectors_d`` ``(n, 3)`` that the
        comparisons' link model predicts, and its posterior SD — as the letters' model gives it
        (:meth:`lensopt.refraction.prescription_report.PrescriptionReport.acuity_logmar`). The
        link's latent is the letter task's, ``f(s, x) = w s + g(x) ≈ a (s − VA(x))`` (its kernel and
        prior mean are linear in the letter size ``s`` with one slope ``w`` for every lens), so the
        threshold is the size where ``f = 0``: ``−g(x) / w``, its SD ``sd(g(x)) / w``, at the
        posterior mean slope. The answers place it relative to where the letters saturate (too
        small to tell the lenses apart, or too large); before any, the prior's acuity law about the
        start. NaN for the probit utility (``clarity_link="linear"``: no acuity scale) and without a
        rising mean slope. The dashboard draws it (:mod:`lensopt.dashboard.model_parts`)."""
        lenses = np.atleast_2d(np.asarray(power_vectors_d, dtype=float))
        nan = np.full(len(lenses), np.nan)
        if self.clarity_link != "acuity" or not len(lenses):
            return nan, nan.copy()
        n = len(lenses)
        X = np.vstack([np.column_stack([np.zeros(n), lenses]), [[1.0, *lenses[0]]]])
        mean, var = self._link_now().predict(X)
        slope = mean[-1] - mean[0]
        if not slope > 1e-9:
            return nan, nan.copy()
        return -mean[:-1] / slope, np.sqrt(np.maximum(var[:-1], 0.0)) / slope

    def _link_shown_lenses(self) -> np.ndarray:
        """The distinct lenses ``(p, 3)`` of the fitted points, in the order first told."""
        points = np.asarray(self._link_now().points_)
        _, first = np.unique(points[:, 1:], axis=0, return_index=True)
        return points[np.sort(first), 1:]

    def _link_comparison(self, rng, champion_d, local, n_others, random_others, same=None):
        """``(lenses, letter_logmar)`` of the next comparison through the link: the champion's
        phoropter lens and ``n_others`` challengers of largest information with the letter size
        (:func:`choose_challengers`; for the rule "random", ``random_others(local, rng) -> (letter
        size, lenses_d)``), each pulled within ``_radius_d`` of the champion and made distinct
        (``same``: :meth:`distinct_lens`'s), the letter size chosen again for the lenses shown."""
        letter_bounds = local.context_bounds[0]
        model = self._link_now()
        first = self.phoropter_lens(champion_d)
        first_d = first.power_vector().to_array()
        if self.rule == "random":
            context, others = random_others(local, rng)
        else:
            context, others = choose_challengers(
                model, first_d, self.box.bounds_d, self._radius_d, letter_bounds, rng, n_others
            )
        lenses = [first]
        for other in others:
            lenses.append(self.distinct_lens(lenses, pull_within(first_d, other, self._radius_d), same))
        if self.rule != "random":
            shown = [lens.power_vector().to_array() for lens in lenses]
            context = choose_letter_size(model, *shown, letter_bounds=letter_bounds)
        return lenses, float(np.asarray(context, dtype=float).reshape(-1)[0])


def check_link_rates(n_alternatives, model_lapse) -> tuple[int, float]:
    """The link's ``n_alternatives`` (an integer >= 2: the guess rate ``1/n``) and ``model_lapse``
    (in ``[0, 1 − 1/n)``), checked; a one-line ValueError else."""
    n = n_alternatives
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n_alternatives must be an integer >= 2, got {n!r}")
    ceiling = 1.0 - 1.0 / int(n)
    lapse = model_lapse
    if isinstance(lapse, bool) or not isinstance(lapse, (int, float)) or not 0.0 <= float(lapse) < ceiling:
        raise ValueError(f"model_lapse must be in [0, 1 - 1/n_alternatives) = [0, {ceiling:.4g}), got {lapse!r}")
    return int(n), float(lapse)


def link_kernel(lens_lengthscale_d: float = LINK_LENS_LENGTHSCALE_D):
    """``θ s s' + σ_c² + σ² k_SE(x, x')`` on ``[letter_logmar, m_d, j0_d, j45_d]``."""
    slope = LinearContext(LINK_SLOPE_SD**2, active_dims=(0,))
    level = SquaredExponential(_CONSTANT_LENGTHSCALE_D, variance=LINK_LEVEL_SD**2, active_dims=(1, 2, 3))
    lens = SquaredExponential(float(lens_lengthscale_d), variance=LINK_LENS_SD**2, active_dims=(1, 2, 3))
    return slope + level + lens


def link_model(
    centre_d, with_bowl: bool, n_alternatives: int, model_lapse: float, rankings: bool = False
) -> AcuityLinkDuelGP:
    """The acuity-link model of a search about ``centre_d`` (the start's power vector; the bowl of
    the acuity law about it when ``with_bowl``, else a prior flat over the lenses): of duels, or of
    rankings (:class:`~lensopt.preference.link.AcuityLinkRankingGP`) when ``rankings``."""
    mean = AcuityLawMean(
        0.0,
        LINK_BOWL_DEPTH if with_bowl else 0.0,
        tuple(float(v) for v in centre_d),
        (1, 2, 3),
        slope=LINK_SLOPE,
        va_logmar=LINK_VA_LOGMAR,
    )
    model_class = AcuityLinkRankingGP if rankings else AcuityLinkDuelGP
    return model_class(link_kernel(), mean, 1.0 / n_alternatives, model_lapse)


def fit_link(model: AcuityLinkDuelGP, duels, same_answers: str) -> AcuityLinkDuelGP | None:
    """``model`` fitted on ``duels`` — ``(letter_logmar, first_d (3,), second_d (3,), answer)`` with
    ``answer`` "first", "second" or "same" ("same" kept when ``same_answers`` is "both-ways") — or
    None when no answer is modelled."""
    rows, codes = [], []
    for s, first_d, second_d, answer in duels:
        if answer == "same" and same_answers != "both-ways":
            continue
        rows += [np.r_[s, first_d], np.r_[s, second_d]]
        codes.append({"first": FIRST, "second": SECOND, "same": SAME}[answer])
    if not codes:
        return None
    points, inverse = np.unique(np.array(rows), axis=0, return_inverse=True)
    return model.fit(points, np.asarray(inverse).reshape(-1, 2), codes)


def fit_link_rankings(model: AcuityLinkRankingGP, rankings) -> AcuityLinkRankingGP | None:
    """``model`` fitted on ``rankings`` — ``(letter_logmar, lenses_d (m, 3), order)`` with ``order``
    the lens indices clearest first (all of them, or all but the last, which the others place) — or
    None before the first ranking."""
    rows: list[np.ndarray] = []
    orders: list[list[int]] = []
    for s, lenses_d, order in rankings:
        order = [*order, *(i for i in range(len(lenses_d)) if i not in order)]
        orders.append([len(rows) + i for i in order])
        rows += [np.r_[s, lens_d] for lens_d in lenses_d]
    if not orders:
        return None
    points, inverse = np.unique(np.array(rows), axis=0, return_inverse=True)
    return model.fit(points, np.asarray(inverse).ravel()[np.array(orders)])


def choose_challengers(model: AcuityLinkDuelGP, first_d, box_bounds_d, radius_d, letter_bounds, rng, n=1):
    """``(letter_logmar, challengers_d (n, 3))``: the challengers within ``radius_d`` of ``first_d``
    (in the box) and the letter size of largest information. The first challenger and the size are
    the duel of largest information with ``first_d``; each next challenger, at that size, the one whose
    duels with the lenses chosen before carry the most information together (a ranking of all of
    them answers each of those duels)."""
    first_d = np.asarray(first_d, dtype=float)
    bounds = np.asarray(box_bounds_d, dtype=float)
    directions = rng.standard_normal((N_CHALLENGERS, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    lengths = radius_d * np.sqrt(rng.uniform(0.05, 1.0, (N_CHALLENGERS, 1)))
    second = np.clip(first_d + directions * lengths, bounds[:, 0], bounds[:, 1])
    lo, hi = (float(v) for v in letter_bounds)
    sizes = np.linspace(lo, hi, SIZE_GRID)
    X1 = np.column_stack([np.repeat(sizes, N_CHALLENGERS), np.tile(first_d, (sizes.size * N_CHALLENGERS, 1))])
    X2 = np.column_stack([np.repeat(sizes, N_CHALLENGERS), np.tile(second, (sizes.size, 1))])
    table = model.duel_bald(X1, X2)
    best = int(np.argmax(table))
    size, chosen = float(X2[best, 0]), [best % N_CHALLENGERS]
    if n > 1:
        candidates = _at_letter_size(second, size)
        information = table.reshape(sizes.size, N_CHALLENGERS)[best // N_CHALLENGERS].copy()  # with first_d
        for _ in range(n - 1):
            last = np.repeat(_at_letter_size(second[chosen[-1]], size), N_CHALLENGERS, axis=0)
            information = information + model.duel_bald(last, candidates)
            information[chosen] = -np.inf
            chosen.append(int(np.argmax(information)))
    return size, second[chosen].copy()


def _at_letter_size(lenses_d, letter_logmar) -> np.ndarray:
    """Model inputs ``[letter_logmar, m_d, j0_d, j45_d]`` of ``lenses_d`` ``(n, 3)`` at one letter size."""
    lenses_d = np.atleast_2d(np.asarray(lenses_d, dtype=float))
    return np.column_stack([np.full(len(lenses_d), float(letter_logmar)), lenses_d])


def choose_challenger(model: AcuityLinkDuelGP, first_d, box_bounds_d, radius_d, letter_bounds, rng):
    """``(letter_logmar, second_d)``: the challenger within ``radius_d`` of ``first_d`` (in the box)
    and the letter size of the duel of largest information with ``first_d``."""
    size, challengers = choose_challengers(model, first_d, box_bounds_d, radius_d, letter_bounds, rng)
    return size, challengers[0]


def choose_letter_size(model: AcuityLinkDuelGP, first_d, second_d, *more_d, letter_bounds) -> float:
    """The letter size of largest information for the lenses ``first_d``, ``second_d`` (and
    ``more_d`` of a ranking): the information of their duels, summed."""
    lo, hi = (float(v) for v in letter_bounds)
    sizes = np.linspace(lo, hi, SIZE_GRID_FINE)
    lenses = [np.asarray(x, dtype=float) for x in (first_d, second_d, *more_d)]
    information = np.zeros(sizes.size)
    for i in range(len(lenses)):
        for j in range(i + 1, len(lenses)):
            X1 = np.column_stack([sizes, np.tile(lenses[i], (sizes.size, 1))])
            X2 = np.column_stack([sizes, np.tile(lenses[j], (sizes.size, 1))])
            information = information + model.duel_bald(X1, X2)
    return float(sizes[int(np.argmax(information))])


__all__ = [
    "CLARITY_LINKS",
    "LINK_PLUS_PREFERENCE",
    "LINK_SLOPE",
    "AcuityLinkSearch",
    "check_link_rates",
    "choose_challenger",
    "choose_challengers",
    "choose_letter_size",
    "fit_link",
    "fit_link_rankings",
    "link_kernel",
    "link_model",
]
