"""Shared by the dashboard tests: simulated duel and ranking sessions stored as the experiment stores
them, a letter session with an answer the clinician undid, and what a legend covers in a drawn panel."""

import numpy as np
import pytest
from matplotlib.collections import PathCollection


def _store_simulated_duels(path, n_duels, model="probit", seed=2, participant="D02"):
    """A simulated duel session in the database at ``path``; returns (session id, optimizer)."""
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.duels import DuelRefractionOptimizer
    from lensopt.store import DuelTrialRecord, SessionStore

    opt = DuelRefractionOptimizer(seed=seed, lens_step_d=0.25, model=model)
    patient = SimulatedPatient(-1.25, -0.75, seed=seed)
    with SessionStore(path) as store:
        sid = store.create_session(participant, {}, {}, opt.settings_dict(), seed, kind="duel")
        for i in range(1, n_duels + 1):
            trial = opt.ask()
            answer = patient.duel_answer(
                trial.letter_logmar, trial.first_lens_d, trial.second_lens_d, tie_threshold=1.0
            )
            opt.tell(trial, answer)
            store.append_duel_trial(
                sid,
                DuelTrialRecord(
                    i,
                    *trial.first_lens_d,
                    *trial.second_lens_d,
                    trial.letter_logmar,
                    "CDHKN",
                    answer,
                    1.0,
                    100.0 + 10.0 * i,
                    101.0 + 10.0 * i,
                ),
            )
    return sid, opt


def _store_simulated_rankings(path, n_rankings, n_lenses=3, seed=2, participant="R02"):
    """A simulated ranking session in the database at ``path``; returns (session id, optimizer)."""
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.rankings import RankingRefractionOptimizer
    from lensopt.store import RankingTrialRecord, SessionStore

    opt = RankingRefractionOptimizer(seed=seed, n_lenses=n_lenses, lens_step_d=0.25)
    patient = SimulatedPatient(-1.25, -0.75, seed=seed)
    with SessionStore(path) as store:
        sid = store.create_session(participant, {}, {}, opt.settings_dict(), seed, kind="ranking")
        for i in range(1, n_rankings + 1):
            trial = opt.ask()
            order = patient.rank_lenses(trial.letter_logmar, trial.lenses_d)
            opt.tell(trial, order)
            store.append_ranking_trial(
                sid,
                RankingTrialRecord(
                    i, trial.lenses_d, trial.letter_logmar, "CDHKN", order, 1.0, 100.0 + 10.0 * i, 101.0 + 10.0 * i
                ),
            )
    return sid, opt


#: Letter rows of :func:`store_undone_letters`, and the one the clinician undid (a mis-keyed letter).
UNDONE_ROWS, UNDONE = 8, 5


def store_undone_letters(
    path, prescription: bool, void: bool = True, status: str = "finished", undone_lens=None, stop=None
):
    """A letter session of ``UNDONE_ROWS`` rows stored as the console stores them, row ``UNDONE`` a wrong
    answer the clinician undid (the optimizer was never told it: the next row is the letter it asks
    again), a full prescription's or a two-parameter search's (``stop``: its stopping rule); returns
    (session id, the optimizer told the answers kept). ``undone_lens``: ``(sphere_d, cylinder_d)`` of
    the undone row, else the lens asked again; ``void=False``: the row stored, not undone yet."""
    from lensopt.modes.registry import get_mode
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.prescription_letters import PrescriptionOptimizer
    from lensopt.store import SessionStore, TrialRecord

    if prescription:
        opt = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=3)
        patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=3)
    else:
        opt = get_mode("letters").new_optimizer({"stop": stop}, rule="ucb-ald", seed=0)
        patient = SimulatedPatient(-1.25, 0.75, slope=5.0, seed=0)
    kept = []
    for _ in range(UNDONE_ROWS - 1):
        trial = opt.ask()
        axis = getattr(trial, "axis_deg", None)
        lens = (trial.sphere_d, trial.cylinder_d) + ((axis,) if axis is not None else ())
        correct = bool(patient.respond(trial.letter_logmar, *lens))
        opt.tell(trial, correct)
        kept.append((trial, correct))
    rows = [*kept[: UNDONE - 1], (kept[UNDONE - 1][0], None), *kept[UNDONE - 1 :]]
    with SessionStore(path) as store:
        sid = store.create_session("P01", {"letters": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}, {}, opt.settings_dict(), 0)
        for i, (trial, correct) in enumerate(rows, start=1):
            sphere_d, cylinder_d = (
                undone_lens if correct is None and undone_lens else (trial.sphere_d, trial.cylinder_d)
            )
            record = TrialRecord(
                i,
                sphere_d,
                cylinder_d,
                trial.letter_logmar,
                "K",
                "K" if correct else "X",
                bool(correct),
                0.8,
                1000.0 + 3 * i,
                1000.8 + 3 * i,
                axis_deg=getattr(trial, "axis_deg", None),
            )
            store.append_trial(sid, record)
            if correct is None and void:
                store.void_trial(sid, i)
        store.set_status(sid, status)
    return sid, opt


@pytest.fixture(scope="session")
def store_simulated_duels():
    """``store(path, n_duels, model="probit", seed=2)``: a simulated duel session, (session id, optimizer)."""
    return _store_simulated_duels


@pytest.fixture(scope="session")
def store_simulated_rankings():
    """``store(path, n_rankings, n_lenses=3, seed=2)``: a simulated ranking session, (session id, optimizer)."""
    return _store_simulated_rankings


def legends_over_data(fig) -> list[str]:
    """What the legends of the panel ``fig`` cover, drawn: each legend whose box overlaps an axes'
    plotting area (where any data may fall: a colour map fills it) and each plotted point (of a
    scatter or a line; outside the axes, those not clipped to it) inside a legend's box; empty
    when every legend lies clear of the data."""
    fig.draw_without_rendering()
    legends = panel_legends(fig)
    data_axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    covered = []
    for legend in legends:
        box = legend.get_window_extent()
        for ax in data_axes:
            if box.overlaps(ax.bbox):
                covered.append(f"legend {box.bounds} over the axes {ax.bbox.bounds} ({ax.get_title(loc='left')!r})")
            scatters = [(c, c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection)]
            for artist, data in [*scatters, *((line, line.get_xydata()) for line in ax.lines)]:
                if not len(data):
                    continue
                xy = ax.transData.transform(data)
                if artist.get_clip_on():  # clipped to the axes: only the points inside it are drawn
                    xy = xy[_inside(ax.bbox, xy)]
                covered += [f"point at {tuple(p)} px under the legend {box.bounds}" for p in xy[_inside(box, xy)]]
    return covered


def panel_legends(fig) -> list:
    """The legends of the panel ``fig``: its own and its axes'."""
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]


def _inside(box, xy) -> np.ndarray:
    """Which rows of ``xy`` (display coordinates, n × 2) lie strictly inside ``box``."""
    xy = np.asarray(xy, dtype=float)
    return (xy[:, 0] > box.x0) & (xy[:, 0] < box.x1) & (xy[:, 1] > box.y0) & (xy[:, 1] < box.y1)
