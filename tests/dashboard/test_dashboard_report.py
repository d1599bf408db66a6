"""The one-page report: a PDF of one page and a PNG whose four panels are drawn."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest
from matplotlib.figure import Figure
from matplotlib.image import imread

from lensopt.dashboard.model import SessionModel
from lensopt.dashboard.panels import draw_history, draw_lens_map
from lensopt.dashboard.report import PAGE_SIZE_IN, PNG_DPI, write_report
from tests.dashboard.conftest import legends_over_data, panel_legends


def _session_snapshot(n_trials=15, seed=2):
    """A snapshot of a simulated session kept in memory (random rule: quick to build)."""
    info, records, _ = _session(n_trials, seed)
    return SessionModel(info).update(info, records)


def _session(n_trials=15, seed=2):
    """A simulated session kept in memory (random rule: quick to build): its info, its records and
    the optimizer's ``(trial, answer)`` history."""
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.store import SessionInfo, TrialRecord

    opt = RefractionOptimizer(rule="random", seed=seed)
    patient = SimulatedPatient(0.5, -1.0, slope=5.0, seed=seed)
    records = []
    for i in range(1, n_trials + 1):
        trial = opt.ask()
        correct = patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)
        opt.tell(trial, correct)
        records.append(
            TrialRecord(
                index=i,
                sphere_d=trial.sphere_d,
                cylinder_d=trial.cylinder_d,
                letter_logmar=trial.letter_logmar,
                letter="K",
                response=None,
                correct=correct,
                rt_s=None,
                presented_at=100.0 + 2 * i,
                answered_at=101.0 + 2 * i,
            )
        )
    info = SessionInfo(
        session_id=4,
        participant="P04",
        kind="letters",
        status="finished",
        created_at=99.0,
        updated_at=200.0,
        seed=seed,
        software_version="0.1.0",
        protocol={},
        calibration={},
        optimizer_settings=opt.settings_dict(),
        n_trials=n_trials,
    )
    return info, records, opt.history


@pytest.fixture(scope="module")
def snap():
    return _session_snapshot()


def test_pdf_report_is_one_a4_page(snap, tmp_path):
    path = write_report(snap, tmp_path / "report.pdf")
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    assert int(fields["Pages"]) == 1
    width_pt, height_pt = (float(v) for v in fields["Page size"].split("pts")[0].split("x"))
    assert (width_pt, height_pt) == pytest.approx((PAGE_SIZE_IN[0] * 72, PAGE_SIZE_IN[1] * 72), abs=1.0)
    assert "P04" in fields["Title"]


def _both_eyes(n_trials=16, seed=3):
    """The session of :func:`_session` as one of both eyes: its first half OD's, the rest OS's."""
    import dataclasses

    info, records, history = _session(n_trials, seed)
    both = dataclasses.replace(info, protocol={"session": {"eye": "OU"}})
    half = n_trials // 2
    eyes = [dataclasses.replace(r, eye="OD" if r.index <= half else "OS") for r in records]
    model = SessionModel(both)
    model.update(both, eyes)
    return model, both, history, half


def test_a_report_of_both_eyes_has_each_eyes_model_on_a_page_of_its_own(tmp_path):
    """An OU session's report showed only the second eye's model (the first's was nowhere but in a
    summary row)."""
    from lensopt.refraction.letters import RefractionOptimizer

    model, info, history, half = _both_eyes()
    pages = model.eye_pages()
    assert [eye for eye, _ in pages] == ["OD", "OS"]
    (_, od), (_, os_) = pages
    for page, own in ((od, history[:half]), (os_, history[half:])):
        rebuilt = RefractionOptimizer.from_settings(info.optimizer_settings, own)
        assert (page.best.sphere_d, page.best.cylinder_d) == pytest.approx(
            rebuilt.best(), abs=1e-4
        )  # told one by one: to the fit's tolerance
        assert page.live and page.eyes == ()  # the eye's own end, not a replay; the other eye has its page
    assert od.model_eye == "OD (right eye)" and od.n_trials == half
    assert os_.model_eye == "OS (left eye)" and os_.n_trials == 2 * half
    pdf = write_report(pages, tmp_path / "both.pdf")
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    first, second = text.split("\f")[:2]
    assert "model of OD (right eye)" in first and "model of OS (left eye)" in second
    info_text = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert dict(line.split(":", 1) for line in info_text.splitlines() if ":" in line)["Pages"].strip() == "2"
    image = imread(write_report(pages, tmp_path / "both.png"))
    assert image.shape[0] == pytest.approx(2 * PAGE_SIZE_IN[1] * PNG_DPI, abs=2)


def test_a_session_of_one_eye_is_reported_on_one_page_naming_no_eye():
    info, records, _ = _session()
    model = SessionModel(info)
    model.update(info, records)
    ((eye, page),) = model.eye_pages()
    assert eye is None and page.live and page.n_trials == info.n_trials


def test_png_report_draws_all_four_panels(snap, tmp_path):
    image = imread(write_report(snap, tmp_path / "report.png"))
    height, width = image.shape[:2]
    assert (width, height) == pytest.approx((PAGE_SIZE_IN[0] * PNG_DPI, PAGE_SIZE_IN[1] * PNG_DPI), abs=1.0)
    gray = image[..., :3].mean(axis=2)
    top = int(0.05 * height)  # below the header line
    middle_y, middle_x = (top + height) // 2, width // 2
    quadrants = [
        gray[top:middle_y, :middle_x],
        gray[top:middle_y, middle_x:],
        gray[middle_y:, :middle_x],
        gray[middle_y:, middle_x:],
    ]
    for quadrant in quadrants:
        assert quadrant.std() > 0.05, "a panel of the report is blank"
        assert (quadrant < 0.5).mean() > 0.002, "a panel of the report has no dark ink (text, axes)"


def test_the_letter_lens_maps_legend_covers_no_lens_tried(snap):
    """The lens map's legend (``loc="best"``, inside the map) could cover lenses tried: it lies
    under the map now (the duel map's test: tests/dashboard/test_comparison_dashboard.py)."""
    fig = Figure(figsize=(5.85, 3.9), layout="constrained")
    draw_lens_map(fig, snap)
    assert panel_legends(fig) and legends_over_data(fig) == []


def test_the_historys_legend_covers_no_letter_shown():
    """The history's legend sat in the upper right, over the letters shown there (a session whose
    letters stay large, as the first trials' do): it lies under the axes now."""
    big = _session_snapshot(n_trials=6, seed=5)
    for size_in in ((5.85, 3.9), (7.0, 4.5)):
        fig = Figure(figsize=size_in, layout="constrained")
        draw_history(fig, big)
        assert panel_legends(fig) and legends_over_data(fig) == []


def test_every_legend_of_the_report_and_the_records_curves_page_stays_on_its_page(snap):
    """The psychometric panel's legend, three columns of long labels, ran off the right edge of the
    report (the printed record's page 2, A4 landscape): a legend now takes fewer columns when it
    would be wider than its panel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from lensopt.dashboard.report import build_report_figure

    fig = build_report_figure(snap)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)  # constrained layout places everything
    legends = [legend for sub in fig.subfigs for legend in panel_legends(sub)]
    assert len(legends) == 3  # the lens map's, the curve's and the history's (the summary has none)
    page = fig.bbox
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert page.x0 - 0.5 <= box.x0 and box.x1 <= page.x1 + 0.5, [t.get_text() for t in legend.get_texts()]


def test_report_of_a_session_without_trials_still_renders(tmp_path):
    from lensopt.store import SessionInfo

    info = SessionInfo(
        session_id=5,
        participant="P05",
        kind="letters",
        status="running",
        created_at=1.0,
        updated_at=1.0,
        seed=0,
        software_version="0.1.0",
        protocol={},
        calibration={},
        optimizer_settings={"rule": "ucb-ald"},
        n_trials=0,
    )
    empty = SessionModel(info).update(info, [])
    assert imread(write_report(empty, tmp_path / "empty.png")).std() > 0.0


@pytest.mark.parametrize("name", ["report.svg", "report"])
def test_report_refuses_other_formats(snap, tmp_path, name):
    with pytest.raises(ValueError, match=r"must end in \.pdf or \.png"):
        write_report(snap, tmp_path / name)


def test_report_refuses_a_missing_folder(snap, tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        write_report(snap, tmp_path / "missing" / "report.pdf")


@pytest.mark.parametrize("name", ["report.pdf", "report.png"])
def test_a_report_is_readable_by_its_owner_only_whatever_the_umask(snap, tmp_path, name):
    """It shows a patient's answers: 0600 under the usual umask 022, and no temporary file is left."""
    previous = os.umask(0o022)
    try:
        path = write_report(snap, tmp_path / name)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_report_replaces_an_older_file_and_keeps_it_private(snap, tmp_path):
    old = tmp_path / "report.pdf"
    old.write_text("old")
    old.chmod(0o644)
    write_report(snap, old)
    assert old.read_bytes().startswith(b"%PDF") and stat.S_IMODE(os.stat(old).st_mode) == 0o600


def test_a_summary_value_too_wide_for_the_reports_panel_is_set_smaller_not_cut():
    """On the report's A4 page the summary panel is narrower than in the window: a long value (an
    eye's provisional estimate) ends inside the panel as the renderer draws it, a short one keeps
    its size."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from lensopt.dashboard.drawing import FONT_SIZE, draw_rows

    page = Figure(figsize=PAGE_SIZE_IN, layout="constrained")
    canvas = FigureCanvasAgg(page)
    summary = np.asarray(page.subfigures(2, 2)).ravel()[3]
    long_value = "provisional estimate -1.00 / -0.50 x 154, not for prescribing"
    rows = [
        ("Rule", "bracket-ald"),
        ("OD", "not enough answers to prescribe", "confidence 0.27 < 0.95 after 20 trials"),
        ("", long_value),
    ]
    draw_rows(summary, "Summary: prescription, each eye", rows, big_labels=("OD",))
    canvas.draw()
    renderer = canvas.get_renderer()
    (ax,) = summary.axes
    texts = {t.get_text(): t for t in ax.texts}
    for text in texts.values():
        assert text.get_window_extent(renderer).x1 <= summary.bbox.x1, text.get_text()
    assert texts["bracket-ald"].get_fontsize() == FONT_SIZE + 2  # fits: its size unchanged
    assert texts[long_value].get_fontsize() < FONT_SIZE + 2


def test_the_reports_title_names_the_time_zone_of_its_start_as_the_record_does(snap, monkeypatch):
    import time

    from lensopt.dashboard.report import build_report_figure

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        title = build_report_figure(snap).get_suptitle()
        moment = time.localtime(snap.header.created_at)
        expected = time.strftime("%Y-%m-%d %H:%M %Z", moment) + (
            " (UTC-05:00)" if moment.tm_isdst == 0 else " (UTC-04:00)"
        )
    finally:
        monkeypatch.undo()
        time.tzset()
    assert expected.split(" (")[0].endswith(("EST", "EDT")) and f", {expected}, " in title


@pytest.mark.parametrize(
    "participant",
    ["P-clinical-prescription-duel", "P-" + "very-long-participant-name-" * 6],
)
def test_a_long_titles_every_word_stays_on_the_page_above_the_panels(snap, participant, tmp_path):
    """The one-line title of participant ``P-clinical-prescription-duel``'s report was cut at the
    page's edge ("rule muc-ald, lenso"): it takes a second line, and is set smaller if that is not
    enough; the panels make room for it."""
    import dataclasses
    import shutil

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from lensopt import __version__
    from lensopt.dashboard.report import build_report_figure

    long = dataclasses.replace(
        snap, header=dataclasses.replace(snap.header, participant=participant, rule="muc-ald", eye="OD")
    )
    fig = build_report_figure(long)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    title = fig._suptitle
    assert " ".join(title.get_text().split()).endswith(f"rule muc-ald, lensopt {__version__}")
    box = title.get_window_extent(renderer)
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1 + 0.5, (box, fig.bbox)
    for sub in fig.subfigs:
        for ax in sub.axes:
            assert ax.get_tightbbox(renderer).y1 <= box.y0 + 0.5, ax.get_title()
    if shutil.which("pdftotext"):  # the words as a reader of the PDF finds them
        path = write_report(long, tmp_path / "long.pdf")
        text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
        assert f"rule muc-ald, lensopt {__version__}" in " ".join(text.split())
        assert participant in text.replace("\n", "")
