"""An answer the clinician undid (Backspace at the console: kept, marked void) in the dashboard: never
counted as a trial, drawn as undone (the printed record's open marker off the line), not as wrong."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

from lensopt.dashboard.model import SessionModel, snapshot_from_store
from lensopt.dashboard.panels import draw_history, draw_lens_map, summary_rows
from lensopt.dashboard.snapshot import NEAR_LENS_RADIUS_D
from lensopt.dashboard.unfinished_text import missing_reason, unfinished_text
from lensopt.store import SessionStore
from tests.dashboard.conftest import UNDONE, UNDONE_ROWS, store_undone_letters

#: The two-parameter session's stopping rule: its budget is the answers kept (7), not the rows (8).
STOP = {"confidence": 0.999, "min_trials": 2, "max_trials": UNDONE_ROWS - 1}


def _store_session(path, prescription: bool, **kwargs):
    """:func:`tests.dashboard.conftest.store_undone_letters` with :data:`STOP` for a two-parameter session."""
    return store_undone_letters(path, prescription, stop=None if prescription else STOP, **kwargs)


@pytest.fixture(scope="module")
def stored_undone(tmp_path_factory):
    """``stored(kind)``: a letter session (``"two-parameter"`` or ``"prescription"``) with one answer
    undone, stored once per module: (kind, path, id, its records, its snapshot)."""
    sessions: dict = {}

    def stored(kind: str):
        if kind not in sessions:
            path = tmp_path_factory.mktemp("undone") / "s.db"
            sid, _ = _store_session(path, prescription=kind == "prescription")
            with SessionStore(path, readonly=True) as store:
                sessions[kind] = (kind, path, sid, store.trials(sid), snapshot_from_store(store, sid))
        return sessions[kind]

    return stored


@pytest.fixture(params=["two-parameter", "prescription"])
def undone(request, stored_undone):
    """Each kind of letter session with one answer undone (:func:`stored_undone`)."""
    return stored_undone(request.param)


def _kept(records):
    return [r for r in records if not r.void]


def test_the_summary_counts_the_answers_kept_and_says_the_undone_one_apart(undone):
    """The reviewer's session: 8 rows, one undone. The header line said "8 trials" and the summary
    "Trials 8": 7 answers, and the one undone said apart; its correct share is of the 7."""
    kind, _, _, records, snap = undone
    kept = _kept(records)
    assert len(records) == UNDONE_ROWS and len(kept) == UNDONE_ROWS - 1
    line = snap.summary_line()
    assert " · 7 trials (+1 undone) · " in line and "8 trial" not in line
    rows = {row[0]: row[1] for row in summary_rows(snap)}
    if kind == "prescription":
        assert rows["Trials"] == "7 (+1 undone)"
        assert "After 7 trials" in snap.message
    else:
        correct = sum(r.correct for r in kept)
        assert rows["Trials"] == f"7 (+1 undone), {correct} correct ({100.0 * correct / 7:.0f}%)"


def test_the_stopping_rule_row_counts_the_answers_kept(stored_undone):
    """A budget of 7 trials reached by 7 answers and one undone (8 rows): "max trials reached", not
    "not yet" (8 rows past the budget of 7 read as a budget raised on resuming). (A full
    prescription's summary has no stopping-rule row.)"""
    _, _, _, _, snap = stored_undone("two-parameter")
    rows = {row[0]: row[1] for row in summary_rows(snap)}
    assert snap.certainty is not None and snap.certainty.confidence < STOP["confidence"]
    assert rows["Stops at"].endswith(": max trials reached"), rows["Stops at"]
    assert "(more on resuming)" not in rows["Stops at"]


def _scatter_points(ax, label: str) -> list[tuple[float, float]]:
    found = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_label() == label]
    return [tuple(p) for c in found for p in np.asarray(c.get_offsets()).tolist()]


def test_the_history_draws_the_undone_answer_as_undone_not_as_a_wrong_one(undone):
    """The history panel (the live one and the record's page 2) drew the undone answer as a red
    cross, "letter shown, wrong": it is an open marker off the letters' line, in the legend "answer
    undone (void, 1)", as the printed record's lens path draws it."""
    _, _, _, records, snap = undone
    fig = Figure()
    draw_history(fig, snap)
    ax = fig.axes[0]
    void = next(r for r in records if r.void)
    # numbered as the console numbers it: the trial of the answer that replaced it (the rows kept before it, + 1)
    number = sum(1 for r in records if not r.void and r.index < void.index) + 1
    point = (float(number), float(void.letter_logmar))
    wrong = _scatter_points(ax, "letter shown, wrong")
    correct = _scatter_points(ax, "letter shown, correct")
    assert len(wrong) + len(correct) == UNDONE_ROWS - 1
    assert sorted(x for x, _ in wrong + correct) == list(range(1, UNDONE_ROWS))  # one answer a trial
    undone_lines = [line for line in ax.lines if line.get_label() == "answer undone (void, 1)"]
    assert undone_lines, [line.get_label() for line in ax.lines]
    assert all(line.get_markerfacecolor() == "none" and line.get_marker() == "o" for line in undone_lines)
    drawn = {(float(x), float(y)) for line in undone_lines for x, y in line.get_xydata()}
    assert drawn == {point}
    # off the line that joins the letters shown
    joined = [line for line in ax.lines if line.get_color() == "0.75"]
    assert joined and [x for line in joined for x in line.get_xdata()] == list(range(1, UNDONE_ROWS))
    labels = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
    assert "answer undone (void, 1)" in labels


def test_the_lens_map_and_the_psychometric_curve_show_only_the_answers_kept(tmp_path):
    """The two-parameter lens map counted the undone answer among "lens tried, wrong", and the
    psychometric curve among the trials near the best lens (here it was tried through the best
    lens): the model was never told it."""
    from lensopt.refraction.shown import NO_AXIS_MERIDIAN_DEG, lens_distances_d

    _, opt = _store_session(tmp_path / "first.db", prescription=False)  # the best lens of the 7 answers
    best = tuple(float(v) for v in opt.best())
    path = tmp_path / "s.db"
    sid, _ = _store_session(path, prescription=False, undone_lens=best)
    with SessionStore(path, readonly=True) as store:
        records, snap = store.trials(sid), snapshot_from_store(store, sid)
    kept = _kept(records)
    np.testing.assert_allclose((snap.best.sphere_d, snap.best.cylinder_d), best, atol=1e-9)
    fig = Figure()
    draw_lens_map(fig, snap)
    labels = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
    n_right = sum(r.correct for r in kept)
    assert f"lens tried, correct ({n_right})" in labels and f"lens tried, wrong ({len(kept) - n_right})" in labels
    assert snap.model_trials.n == len(kept) and not snap.model_trials.void.any()

    def near(rows):
        tried = np.array([[r.sphere_d, r.cylinder_d, NO_AXIS_MERIDIAN_DEG] for r in rows])
        return int((lens_distances_d(tried, (*best, NO_AXIS_MERIDIAN_DEG)) <= NEAR_LENS_RADIUS_D).sum())

    assert near(records) == near(kept) + 1  # the undone answer was through the best lens
    assert len(snap.psychometric.near_correct) == near(kept)


def test_an_answer_undone_while_followed_leaves_the_history_it_would_have_read_fresh(tmp_path):
    """The dashboard following the session when the clinician presses Backspace: its estimated best
    acuity after the undone answer was still the one of a model told it; it is that of a dashboard
    opened afterwards on the same rows."""
    path = tmp_path / "s.db"
    sid, _ = _store_session(path, prescription=False, void=False, status="running")
    with SessionStore(path) as store:
        info, records = store.session(sid), store.trials(sid)
        followed = SessionModel(info)
        followed.update(info, records)
        store.void_trial(sid, UNDONE)
        info, records = store.session(sid), store.trials(sid)
    live = followed.update(info, records).history
    fresh = SessionModel(info).update(info, records).history
    np.testing.assert_array_equal(live.n_trials, fresh.n_trials)
    np.testing.assert_allclose(
        live.acuity_mean_logmar, fresh.acuity_mean_logmar, rtol=0, atol=1e-6
    )  # refits agree to ~1e-9
    np.testing.assert_allclose(
        live.acuity_sd_logmar, fresh.acuity_sd_logmar, rtol=0, atol=1e-6
    )  # refits agree to ~1e-9


def test_the_records_words_for_a_session_without_a_prescription_count_the_answers_kept(tmp_path):
    """ "still running (8 trials so far)" for 7 answers and one undone: 7; a session whose only answer
    was undone has no answered trial."""
    path = tmp_path / "s.db"
    sid, _ = _store_session(path, prescription=True, status="running")
    with SessionStore(path, readonly=True) as store:
        info = store.session(sid)
    assert (info.n_trials, info.n_undone) == (UNDONE_ROWS, 1)
    assert "(7 trials so far)" in missing_reason(info, "running")
    assert "(7 trials so far)" in unfinished_text(info, "running")
    assert "stopped after 7 trials" in unfinished_text(info, "stopped")
    only_undone = dataclasses.replace(info, n_trials=1, n_undone=1)
    assert "has no answered trial" in missing_reason(only_undone, "stopped")
