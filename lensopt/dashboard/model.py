"""What the clinician's dashboard shows, computed from stored trials (no Qt, no pyplot).

The dashboard never talks to the running experiment: it rebuilds the model from the trials in the
session database with ``RefractionOptimizer.from_settings(session.optimizer_settings, history)``
(replay by ``tell``, so the rebuilt optimizer is the experiment's optimizer) and derives every
number the panels draw into one frozen :class:`DashboardSnapshot`. The ± of the best lens and its
credible region are those of every kind of session (:mod:`lensopt.dashboard.posterior`); the
sessions that compare lenses have their own model (:mod:`lensopt.dashboard.comparison_model`), and
:func:`session_model_class` picks the one a stored session needs.

Confidence
----------
The summary's confidence and 95 % intervals of sphere and cylinder are the optimizer's own
``certainty()`` (:mod:`lensopt.refraction.certainty`: the posterior probability that the best lens is within
0.025 logMAR of the best, the stopping rule's quantity), computed here, in the worker thread, once
per snapshot; with the session's stopping rule when its settings hold one.

Full prescription
-----------------
A letter session of the full prescription (sphere, cylinder and axis around a start,
:func:`lensopt.modes.letters.is_prescription`) is rebuilt as a ``PrescriptionOptimizer``; its
three-dimensional model is drawn as two slices through the reported lens
(:func:`compute_prescription_view`: the astigmatism plane ``(J0, J45)`` at its ``M``, and the
defocus curve along ``M``), with the trials (the history panel) and each eye's result so far
(:class:`EyeEstimate`): the prescription in
clinical notation with its confidence, or "not enough answers to prescribe" for an eye short of the
session's target confidence (the closing console's rule, :func:`lensopt.stopping.enough_to_prescribe`),
also in its message (:data:`PRESCRIPTION_MESSAGE`).

Both eyes
---------
A session of both eyes (``OU``) searches OD, then OS, each with its own optimizer. The live model is
the last trial's eye's (the panels over ``(S, C)`` name it); each other eye's result is computed
from its own answers (an optimizer rebuilt on them, kept while they do not change) and shown
beside it, labelled OD or OS.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from lensopt import __version__
from lensopt.dashboard.comparison_model import DuelSessionModel, RankingSessionModel
from lensopt.dashboard.model_parts import best_acuity, compute_model_parts, compute_prescription_view
from lensopt.dashboard.posterior import (
    optimizer_bounds,
    settings_bounds,
)
from lensopt.dashboard.replay import FollowedSession
from lensopt.dashboard.series import DEFAULT_GUESS_RATE, TrialSeries, count_text, frozen_array
from lensopt.dashboard.snapshot import (
    WAITING_MESSAGE,
    AcuityHistory,
    DashboardSnapshot,
    PrescriptionView,
    lens_notation_from_protocol,
    lens_step_from_protocol,
    model_eye_name,
)
from lensopt.dashboard.verdict import EyeEstimate, LensConfidence
from lensopt.errors import LensoptError
from lensopt.modes.base import answered, answers_bar, eye_records
from lensopt.modes.letters import is_prescription, optimizer_class_for
from lensopt.modes.registry import get_mode
from lensopt.refraction.lens import two_parameter_lens_text
from lensopt.refraction.phoropter import round_lens
from lensopt.refraction.shown import ReadThrough, read_through, untried_d
from lensopt.store.budget import StoredBudget, stored_budget
from lensopt.store.claim import session_status
from lensopt.store.records import EYES
from lensopt.store.verdict import cylinder_without_axis, stored_confidence_target, stored_fixed_design

#: The best-acuity history is refit after every trial up to this many trials ...
DENSE_HISTORY_TRIALS = 60
#: ... and after every ``HISTORY_STRIDE``-th trial after that (and always at the last trial).
HISTORY_STRIDE = 5

#: Results of the eyes done with kept (one per eye and set of its answers; an undone answer makes a new set).
EYE_CACHE_SIZE = 8

#: What the summary line says of a full-prescription session: ``{trials}`` its answers (not those
#: undone: ``1 trial``, ``8 trials``), ``{eyes}`` each eye's result (:meth:`EyeEstimate.line`), joined by ``; ``.
PRESCRIPTION_MESSAGE = "Full prescription (sphere, cylinder and axis). After {trials}: {eyes}."

# --------------------------------------------------------------------------- small pure helpers


def guess_rate_from_protocol(protocol: dict | None) -> float:
    """``1/n`` for an ``n``-alternative letter task, read from a protocol snapshot.

    Looks (at any depth) for ``guess_rate``, then ``n_alternatives``, then ``alphabet`` or
    ``letters`` (a string or a list of the letters the patient chooses from, as in the protocols'
    ``[letters] alphabet``); falls back to ``DEFAULT_GUESS_RATE`` (26 letters).
    """
    keys = ("guess_rate", "n_alternatives", "alphabet", "letters")
    found: dict = {}

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in keys and key not in found and not isinstance(value, dict):
                    found[key] = value
                walk(value)

    walk(protocol or {})
    rate = found.get("guess_rate")
    if isinstance(rate, (int, float)) and 0.0 < rate < 1.0:
        return float(rate)
    n = found.get("n_alternatives")
    if isinstance(n, int) and n >= 2:
        return 1.0 / n
    for key in ("alphabet", "letters"):
        letters = found.get(key)
        if isinstance(letters, (str, list, tuple)) and len(set(letters)) >= 2:
            return 1.0 / len(set(letters))
    return DEFAULT_GUESS_RATE


def history_checkpoints(
    n_trials: int, dense_until: int = DENSE_HISTORY_TRIALS, stride: int = HISTORY_STRIDE
) -> np.ndarray:
    """Trial counts after which the best-acuity history is refit: every trial up to
    ``dense_until``, then every ``stride``-th, and always ``n_trials`` itself."""
    if n_trials <= 0:
        return np.zeros(0, dtype=int)
    dense = np.arange(1, min(n_trials, dense_until) + 1)
    sparse = np.arange(dense_until + stride, n_trials + 1, stride)
    return np.unique(np.concatenate([dense, sparse, [n_trials]])).astype(int)


def answer_model(settings: dict, guess_rate: float) -> tuple[bool, float]:
    """``(floored, lapse)`` of a letter session's stored settings: whether its model is
    ``P = γ + (1 − γ − λ) Φ(f)`` (``"likelihood": "floored"``, with ``γ = guess_rate``) and its
    ``λ``; sessions stored before the floor (no ``likelihood``) are the plain probit ``Φ(f)``."""
    if settings.get("likelihood") != "floored":
        return False, 0.0
    lapse = settings.get("lapse", 0.0)
    lapse = float(lapse) if isinstance(lapse, (int, float)) and 0.0 <= lapse < 1.0 - guess_rate else 0.0
    return True, lapse


def lens_confidence(opt, budget: StoredBudget) -> LensConfidence | None:
    """``opt.certainty()`` (posterior draws, 20–200 ms: call it off the GUI thread) and the stopping
    rule the session last ran with (``budget``: :func:`lensopt.store.budget.stored_budget`, a resume's
    ``--trials`` counted); None for an optimizer without ``certainty``."""
    certainty = getattr(opt, "certainty", None)
    if certainty is None:
        return None
    c = certainty()
    rule = budget.rule
    return LensConfidence(
        confidence=float(c.confidence),
        sphere_interval_d=tuple(c.sphere_interval_d),
        cylinder_interval_d=tuple(c.cylinder_interval_d),
        tolerance_logmar=float(c.tolerance_logmar),
        stop_confidence=None if rule is None else rule.confidence,
        min_trials=None if rule is None else rule.min_trials,
        max_trials=None if rule is None else rule.max_trials,
        check_letters=0 if rule is None else rule.check_letters,
        letters_through=opt.letters_through_reported() if rule is not None and rule.check_letters else 0,
        budget_known=budget.known,
    )


class SessionModel(FollowedSession):
    """Follows one letter session: tells new trials to a cached optimizer and builds snapshots.

    ``update`` (see :class:`FollowedSession`) also refits the best-acuity history at the
    checkpoints of :func:`history_checkpoints`; ``snapshot(n)`` replays the first ``n`` trials for
    the slider. Not thread-safe: the dashboard's worker owns it.
    """

    feedback = get_mode("letters")
    kind = feedback.kind

    def __init__(self, info, optimizer_factory=None):
        settings = info.optimizer_settings
        super().__init__(info, optimizer_factory or optimizer_class_for(settings).from_settings)
        self._prescription = is_prescription(settings)
        self._history: list[tuple[int, float, float]] = []
        self._eye_cache: dict[tuple, EyeEstimate] = {}  # an eye done with: its answers -> its result

    def _after_tell(self) -> None:
        if self._prescription:  # no (S, C) best-acuity history for a three-dimensional model
            return
        n = len(self._records)
        if n <= DENSE_HISTORY_TRIALS or (n - DENSE_HISTORY_TRIALS) % HISTORY_STRIDE == 0:
            self._history.append((n, *best_acuity(self._opt)[2:]))

    def _forget_after(self, n: int) -> None:
        self._history = [row for row in self._history if row[0] <= n]  # refit as the records are told again

    def _guess_rate(self, info) -> float:
        """The optimizer's own ``n_alternatives`` when it has one, else the protocol's letters."""
        n = self._settings.get("n_alternatives")
        if isinstance(n, int) and n >= 2:
            return 1.0 / n
        return guess_rate_from_protocol(info.protocol)

    def _eye_groups(self, records) -> list[tuple[str, list]]:
        """``(eye, its records)`` of each eye a result is shown for, OD before OS: both of an OU
        session (an eye not reached yet with none), the session's one eye, the eyes the trials name;
        trials that name none (a session recorded before eyes were): one group, named for the
        session's eye if it names one, else ``""``."""
        named = [eye for eye in EYES if any(getattr(r, "eye", None) == eye for r in records)]
        tested = self._info.eye
        if not named:
            return [(tested if tested in EYES else "", list(records))]
        eyes = list(EYES) if tested == "OU" else sorted({*named, *([tested] if tested in EYES else [])}, key=EYES.index)
        return [(eye, eye_records(records, eye)) for eye in eyes]

    def _estimate(self, opt, eye: str, target: float, certainty: LensConfidence | None = None) -> EyeEstimate:
        """Eye ``eye``'s result from its optimizer ``opt`` (told its answers): the prescription of a
        full-prescription search, the best (S, C) of a two-parameter one (``certainty``: its
        confidence when already computed). A session without a stopping rule ran a fixed number of
        trials: its result short of ``target`` is its estimate (``fixed_design``)."""
        fixed_design = stored_fixed_design(self._info)
        if self._prescription:
            rx = opt.prescription()
            return EyeEstimate(
                eye,
                rx.text,
                rx.confidence,
                target,
                int(rx.trials),
                fixed_design,
                untried_d=self._untried_d(opt),
                acuity_logmar=rx.predicted_acuity_logmar,
                intervals=tuple((key, float(lo), float(hi)) for key, (lo, hi) in rx.intervals.items()),
                read_through=self._read_through(opt, rx.predicted_acuity_logmar),
            )
        sphere_d, cylinder_d = opt.best()
        if certainty is not None:
            confidence: float | None = certainty.confidence
        else:
            confidence = float(opt.confidence()) if hasattr(opt, "confidence") else None
        axis_deg, convention = lens_notation_from_protocol(self._info.protocol)
        lens = two_parameter_lens_text(float(sphere_d), float(cylinder_d), axis_deg, convention, gap=", ")
        no_axis = cylinder_without_axis(float(cylinder_d), axis_deg or None)
        return EyeEstimate(
            eye, lens, confidence, target, int(opt.n_trials), fixed_design, no_axis, untried_d=self._untried_d(opt)
        )

    def _reported_lens(self, opt) -> tuple[float, float, float | None, float | None]:
        """``(sphere_d, cylinder_d, axis_deg, meridian_deg)`` of the lens ``opt`` would report — a full
        prescription's, or a two-parameter search's best lens on the phoropter's steps (no axis: its
        cylinder along the protocol's ``meridian_deg``), as its stored result writes it."""
        if self._prescription:
            lens = opt.prescription().lens
            return lens.sphere_d, lens.cylinder_d, lens.axis_deg, None
        bounds = (optimizer_bounds(opt, "sphere_bounds_d"), optimizer_bounds(opt, "cylinder_bounds_d"))
        sphere_d, cylinder_d = round_lens(opt.best(), lens_step_from_protocol(self._info.protocol), bounds)
        meridian_deg, _ = lens_notation_from_protocol(self._info.protocol)
        return sphere_d, cylinder_d, None, meridian_deg

    def _untried_d(self, opt) -> float | None:
        """:func:`~lensopt.refraction.shown.untried_d` of the lens ``opt`` would report
        (:meth:`_reported_lens`) over the answers it was told (not those undone): the console's rule."""
        sphere_d, cylinder_d, axis_deg, meridian_deg = self._reported_lens(opt)
        return untried_d(sphere_d, cylinder_d, axis_deg, [trial for trial, _ in opt.history], meridian_deg)

    def _read_through(self, opt, predicted_logmar: float | None) -> ReadThrough | None:
        """What the patient read through the lens ``opt`` would report (:func:`~lensopt.refraction.shown.read_through`
        over the answers it was told; ``predicted_logmar`` its predicted acuity): the console's and the record's rule."""
        sphere_d, cylinder_d, axis_deg, meridian_deg = self._reported_lens(opt)
        return read_through(sphere_d, cylinder_d, axis_deg, opt.history, meridian_deg, predicted_logmar)

    def _eye_estimates(self, n: int, live_opt, certainty: LensConfidence | None = None) -> tuple[EyeEstimate, ...]:
        """Each eye's result after the first ``n`` records, OD before OS: the live eye's (the last
        record's) from ``live_opt``, every other eye's from an optimizer rebuilt on its own answers
        (cached by those answers), an eye without any: "no answer yet"."""
        records = self._records[:n]
        target = stored_confidence_target(self._info)
        out = []
        for eye, own in self._eye_groups(records):
            if own and own[-1] is records[-1]:  # the eye searched last: the live model's
                if not live_opt.n_trials:
                    out.append(EyeEstimate(eye, "", None, target, 0))
                else:
                    out.append(self._estimate(live_opt, eye, target, certainty))
                continue
            if not answered(own):
                out.append(EyeEstimate(eye, "", None, target, 0))
                continue
            key = (eye, tuple((r.index, bool(getattr(r, "void", False))) for r in own))
            if key not in self._eye_cache:
                if len(self._eye_cache) >= EYE_CACHE_SIZE:  # answers undone since: the old keys are stale
                    self._eye_cache.clear()
                self._eye_cache[key] = self._estimate(self._optimizer_for(own), eye, target)
            out.append(self._eye_cache[key])
        return tuple(out)

    def eye_views(self) -> tuple[PrescriptionView, ...]:
        """Each eye's model after every record, OD before OS (a full-prescription session; ``()``
        otherwise): the astigmatism plane and defocus curve of each eye with answers, from an
        optimizer told that eye's own answers (the eye searched last: the followed one)."""
        if not self._prescription:
            return ()
        records = self._records
        views = []
        for eye, own in self._eye_groups(records):
            if not answered(own):
                continue
            live = own[-1] is records[-1] and self._opt is not None
            views.append(compute_prescription_view(self._opt if live else self._optimizer_for(own), eye))
        return tuple(views)

    def _page_of(self, snap: DashboardSnapshot, eye: str) -> DashboardSnapshot:
        """``snap`` without the other eye's result, which its own page shows (the first eye's page,
        drawn at the end of its search, said of the second "no answer yet")."""
        return dataclasses.replace(snap, eyes=tuple(e for e in snap.eyes if e.eye == eye))

    def _build(self, n: int, live: bool) -> DashboardSnapshot:
        header = self._header(guess_rate=self._guess_rate(self._info))
        trials = TrialSeries.from_records(self._records[:n])
        rows = [row for row in self._history if row[0] <= n]
        if n == 0:
            history = AcuityHistory(frozen_array([], int), frozen_array([]), frozen_array([]))
            sphere_b, cylinder_b, letter_b = settings_bounds(self._settings)
            return DashboardSnapshot(
                header, trials, history, sphere_b, cylinder_b, letter_b, live=live, message=WAITING_MESSAGE
            )
        opt = self._optimizer_after(n)
        if self._prescription:
            eyes = self._eye_estimates(n, opt)
            message = PRESCRIPTION_MESSAGE.format(
                trials=count_text(trials.n_answers, "trial"), eyes="; ".join(e.line() for e in eyes)
            )
            empty = AcuityHistory(frozen_array([], int), frozen_array([]), frozen_array([]))
            sphere_b, cylinder_b, letter_b = settings_bounds(self._settings)
            live_eye = getattr(self._records[n - 1], "eye", None)
            view = compute_prescription_view(opt, live_eye) if opt.n_trials else None
            return DashboardSnapshot(
                header,
                trials,
                empty,
                sphere_b,
                cylinder_b,
                letter_b,
                live=live,
                message=message,
                eyes=eyes,
                prescription_view=view,
            )
        rng = np.random.default_rng([abs(header.seed), n])
        floored, lapse = answer_model(self._settings, header.guess_rate)
        live_eye = getattr(self._records[n - 1], "eye", None) or ""
        # the live eye's answers (not those undone): near its best lens, the curve's points; a session of
        # both eyes' other eye has its own
        eye_trials = (trials.of_eye(live_eye) if model_eye_name(header, trials) is not None else trials).answered()
        lens_map, best, curve, bounds = compute_model_parts(opt, eye_trials, header.guess_rate, rng, floored, lapse)
        if not rows or rows[-1][0] != n:
            rows.append((n, best.acuity_mean_logmar, best.acuity_sd_logmar))
        columns = zip(*rows)
        history = AcuityHistory(*(frozen_array(col, dtype) for col, dtype in zip(columns, (int, float, float))))
        certainty = lens_confidence(opt, stored_budget(self._info))
        # a session of both eyes: the panels show the live eye's model; the summary adds the other eye's result
        others: tuple[EyeEstimate, ...] = ()
        if model_eye_name(header, trials) is not None:
            others = tuple(e for e in self._eye_estimates(n, opt, certainty) if e.eye != live_eye)
        target = stored_confidence_target(self._info)
        verdict = None if certainty is None else self._estimate(opt, live_eye, target, certainty)
        axis_deg, convention = lens_notation_from_protocol(self._info.protocol)
        return DashboardSnapshot(
            header,
            trials,
            history,
            *bounds,
            lens_map=lens_map,
            best=best,
            psychometric=curve,
            live=live,
            certainty=certainty,
            eyes=others,
            lens_axis_deg=axis_deg,
            cylinder_convention=convention,
            verdict=verdict,
            untried_d=verdict.untried_d if verdict is not None else self._untried_d(opt),
            read_through=self._read_through(opt, best.acuity_mean_logmar),
        )


SESSION_MODELS: dict[str, type[FollowedSession]] = {
    model.kind: model for model in (SessionModel, DuelSessionModel, RankingSessionModel)
}
"""Session kind (of :data:`lensopt.modes.registry.registry`) -> the dashboard's model of it: the
letter model for a mode that shows letters through one lens, a comparison model (and its panels)
for a mode whose trials compare lenses (``FeedbackMode.comparison``); a test holds the kinds equal."""


def session_model_class(info) -> type:
    """The model that follows ``info``'s kind of session: :class:`SessionModel` (letters), or
    :class:`~lensopt.dashboard.comparison_model.DuelSessionModel` or ``RankingSessionModel``.

    A kind this version does not know (a session written by a newer lensopt) is a
    :class:`~lensopt.errors.LensoptError` that says so, never a guess at another kind's panels.
    """
    models = SESSION_MODELS
    if info.kind not in models:
        raise LensoptError(
            f"session {info.session_id} is a {info.kind!r} session, which the dashboard of lensopt {__version__} "
            f"cannot show (it shows {', '.join(models)} sessions); update lensopt to see it"
        )
    return models[info.kind]


def session_model(info, optimizer_factory=None, db_path=None) -> FollowedSession:
    """A new model following the session ``info`` (see :func:`session_model_class`), read from the
    database ``db_path`` (named in the command that continues it; None: not known)."""
    model = session_model_class(info)(info, optimizer_factory)
    model.db_path = None if db_path is None else Path(db_path)
    return model


def followed_from_store(store, session_id: int) -> FollowedSession:
    """The model of a stored session of any kind, told all its records, with a progress bar on a
    terminal for a long one (:func:`lensopt.modes.base.answers_bar`); its status as shown
    (:func:`lensopt.store.claim.session_status`)."""
    info = store.session(session_id)
    model = session_model(info, db_path=store.path)
    records = model.read_records(store, session_id)
    shown = answers_bar(len(records), f"replaying session {session_id}")
    model.update(info, records, status=session_status(store.path, session_id, info.status), shown=shown)
    return model


def snapshot_from_store(store, session_id: int, n_trials: int | None = None):
    """One-shot snapshot of a stored session of any kind (used by the report export)."""
    return followed_from_store(store, session_id).snapshot(n_trials)
