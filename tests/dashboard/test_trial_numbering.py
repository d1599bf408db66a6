"""Trials are numbered on every plot as the console numbers them: by the answers that count. After
one undo the reviewer's "10 of 10 (+1 undone)" ran to trial 11 on the dashboard's history and the
record's page 2, each answer after the undone one drawn a trial late."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

from lensopt.dashboard.model import snapshot_from_store
from lensopt.dashboard.panels import draw_history
from lensopt.dashboard.prescription_record import _draw_lens_path
from lensopt.dashboard.series import answer_numbers
from lensopt.store import ResultRecord, SessionStore
from tests.dashboard.conftest import UNDONE, UNDONE_ROWS, store_undone_letters

#: A result for the lens path's right-hand column, its M, J0 and J45 with their intervals.
RESULT = ResultRecord(
    "-1.25 / -0.75 x 170",
    -1.25,
    -0.75,
    170.0,
    0.0,
    0.99,
    UNDONE_ROWS - 1,
    {"m_d": [-2.0, -1.0], "j0_d": [-0.2, 0.6], "j45_d": [-0.4, 0.3]},
)


def test_the_console_numbers_answers_kept_per_eye_and_an_undone_one_as_its_replacement():
    eyes = ["OD", "OD", "OD", "OD", "OS", "OS", "OS"]
    void = [False, True, False, False, False, True, False]
    assert answer_numbers(eyes, void).tolist() == [1, 2, 2, 3, 1, 2, 2]  # "OS trial 1", as the console
    assert answer_numbers(eyes, void, per_eye=False).tolist() == [1, 2, 2, 3, 4, 5, 5]  # one axis


def test_the_history_and_the_lens_path_end_at_the_last_answer_not_the_last_row(tmp_path):
    path = tmp_path / "s.db"
    sid, _ = store_undone_letters(path, prescription=True)
    with SessionStore(path, readonly=True) as store:
        snap, records = snapshot_from_store(store, sid), store.trials(sid)
    n_answers = UNDONE_ROWS - 1
    fig = Figure()
    draw_history(fig, snap)
    (ax,) = fig.axes
    assert ax.get_xlim()[1] == n_answers + 0.5
    undone = next(line for line in ax.lines if line.get_label().startswith("answer undone"))
    assert undone.get_xdata().tolist() == [UNDONE]  # at the answer that replaced it

    fig = Figure()
    _draw_lens_path(fig, records, [RESULT])
    (ax,) = fig.axes
    m_line = next(line for line in ax.get_lines() if line.get_label() == "M of the lens tested")
    assert m_line.get_xdata().tolist() == list(range(1, n_answers + 1))
    ticks = [t for t in ax.xaxis.get_major_locator().tick_values(*ax.get_xlim())]
    assert max(ticks) == n_answers


def test_the_results_m_j0_and_j45_intervals_are_drawn_side_by_side_and_named(tmp_path):
    path = tmp_path / "s.db"
    sid, _ = store_undone_letters(path, prescription=True)
    with SessionStore(path, readonly=True) as store:
        records = store.trials(sid)
    fig = Figure()
    _draw_lens_path(fig, records, [RESULT])
    (ax,) = fig.axes
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    xs = [float(np.asarray(bar.lines[0].get_xdata())[0]) for bar in bars]
    assert len(bars) == 3 and len(set(xs)) == 3 and xs == sorted(xs)  # M, J0, J45 left to right
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    for name in ("M", "J0", "J45"):
        assert f"{name} of the result, 95 % interval" in labels


def test_a_session_of_both_eyes_numbers_each_eyes_trials_from_one_as_the_console(tmp_path):
    """The console counts OS's trials from 1 ("OS trial 1"): the lens path of 12 OD and 12 OS trials,
    one of OS's undone, ticks OS's trials from 1, placed after OD's on the one axis."""
    path = tmp_path / "s.db"
    sid, _ = store_undone_letters(path, prescription=True)
    with SessionStore(path, readonly=True) as store:
        (record, *_) = store.trials(sid)
    eyes = ["OD"] * 12 + ["OS"] * 13
    void = [False] * 12 + [False, False, True] + [False] * 10
    records = [replace(record, index=i + 1, eye=eye, void=undone) for i, (eye, undone) in enumerate(zip(eyes, void))]
    fig = Figure()
    _draw_lens_path(fig, records, [replace(RESULT, eye="OD"), replace(RESULT, eye="OS")])
    (ax,) = fig.axes
    fig.canvas.draw()
    ticks = dict(zip(ax.get_xticks().tolist(), [t.get_text() for t in ax.get_xticklabels()]))
    # OS trial 5 stands 5 places after OD's 12 answers; OS's 10th after its undone one counts no place
    assert ticks == {5.0: "5", 10.0: "10", 17.0: "5", 22.0: "10"}
    assert ax.get_xlabel() == "trial (each eye's own, as on the console)"


def test_the_short_runs_of_eyes_given_more_trials_on_resuming_do_not_tick_side_by_side(tmp_path):
    """OD 20, OS 20, then a resume with --trials 22 and a kill: OD 21-22, OS 21-24. Each short run
    ticked every answer, its numbers running into its neighbours' ("2021222122"); a tick now stands
    at least 1/16 of the axis from the one before, each still at its eye's own number."""
    path = tmp_path / "s.db"
    sid, _ = store_undone_letters(path, prescription=True)
    with SessionStore(path, readonly=True) as store:
        (record, *_) = store.trials(sid)
    eyes = ["OD"] * 20 + ["OS"] * 20 + ["OD"] * 2 + ["OS"] * 4
    records = [replace(record, index=i + 1, eye=eye, void=False) for i, eye in enumerate(eyes)]
    fig = Figure()
    _draw_lens_path(fig, records, [replace(RESULT, eye="OD"), replace(RESULT, eye="OS")])
    (ax,) = fig.axes
    fig.canvas.draw()
    places = ax.get_xticks().tolist()
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert min(b - a for a, b in itertools.pairwise(places)) >= len(eyes) / 16
    own = {}  # each place's own number: OD 1-20, OS 1-20, OD 21-22, OS 21-24
    for place, eye in enumerate(eyes, start=1):
        own[place] = sum(e == eye for e in eyes[:place])
    assert all(own[round(place)] == int(label) for place, label in zip(places, labels))
    assert {"10", "20"} <= set(labels)
    # each label's box clear of the next one's, as drawn
    boxes = [t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()]
    assert all(a.x1 <= b.x0 for a, b in itertools.pairwise(boxes))
