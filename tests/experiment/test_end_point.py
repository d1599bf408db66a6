"""The end point's estimate of the trials still needed: a straight line through the confidence trend."""

import math
import types
from dataclasses import replace

from lensopt.experiment.end_point import (
    MAX_EXTRAPOLATION,
    EndPoint,
    continue_advice_for,
    more_trials_estimate,
)
from lensopt.experiment.prescription_text import prescription_lines
from lensopt.experiment.search_sections import MAX_TRIALS
from lensopt.refraction.shown import untried_note
from lensopt.store import ResultRecord


def continue_command(end_points, session_id: int, db_path=None, options: str = "") -> str | None:
    """The command the log gives for ``end_points``: their advice's (``None``: none)."""
    advice = continue_advice_for(end_points, options)
    return None if advice is None else advice.command(session_id, db_path)


def test_a_rising_confidence_is_extrapolated_to_the_target():
    rising = [(n, 0.02 * n) for n in range(20, 30)]  # 0.40 ... 0.58, +0.02 per answer
    assert more_trials_estimate(rising, 0.95) == 19  # (0.95 - 0.58) / 0.02 = 18.5


def test_no_number_without_a_rising_trend_enough_points_or_within_twice_the_answers():
    assert more_trials_estimate([(n, 0.5) for n in range(20, 30)], 0.95) is None  # flat
    assert more_trials_estimate([(n, 0.9 - 0.01 * n) for n in range(20, 30)], 0.95) is None  # falling
    assert more_trials_estimate([(20, 0.4), (21, 0.45), (22, 0.5)], 0.95) is None  # too few
    assert more_trials_estimate([(n, 0.001 * n) for n in range(20, 30)], 0.95) is None  # 900 more: too far


def test_the_end_point_reads_as_the_console_writes_it():
    confident = EndPoint("OD", True, 0.97, 0.95, "-1.25 / -0.75 x 170", ("predicted acuity +0.02 logMAR",))
    assert confident.lines() == ["OD  -1.25 / -0.75 x 170", "predicted acuity +0.02 logMAR"]
    short = EndPoint("OS", False, 0.41, 0.95, "+4.00 / -4.00 x 090", more_trials=19)
    assert short.lines() == [
        "OS  not enough answers to prescribe; confidence 0.41 < 0.95; about 19 more trials recommended"
    ]
    unknown = EndPoint(None, False, 0.41, 0.95, "+4.00 / -4.00 x 090")
    assert unknown.lines() == ["not enough answers to prescribe; confidence 0.41 < 0.95; more trials recommended"]


def test_a_result_short_of_its_target_is_logged_as_an_estimate_not_a_prescription():
    def result(confidence, eye="OD"):
        return ResultRecord("-1.25 / -0.75 x 170", -1.25, -0.75, 170.0, 0.02, confidence, 40, {}, eye=eye)

    assert prescription_lines(result(0.97), 0.95)[0].startswith("prescription OD: -1.25 / -0.75 x 170  (predicted")
    assert prescription_lines(result(0.95), 0.95)[0].startswith("prescription OD: ")  # the target itself is enough
    assert prescription_lines(result(0.12), 0.95)[0].startswith("estimate OD, not a prescription: -1.25 / -0.75 x 170")
    assert prescription_lines(result(0.12, eye=None), 0.95)[0].startswith("estimate, not a prescription: -1.25")
    assert prescription_lines(result(None), 0.95)[0].startswith("prescription OD: ")  # duels: no confidence to hold
    assert prescription_lines(result(0.12))[0].startswith("prescription OD: ")  # no target given: as stored


def test_a_stored_lens_without_an_axis_is_not_given_one_in_plus_cylinder():
    # the closing console in plus cylinder transposes a stored minus-cylinder lens at its axis; a
    # two-parameter result without an axis (sphere and signed cylinder) stays as it is
    import types

    from lensopt.experiment.end_point import _reported_text

    protocol = types.SimpleNamespace(lens=types.SimpleNamespace(cylinder="plus"))
    unaxed = ResultRecord("S -0.50 D  C +1.00 D", -0.5, 1.0, None, -0.02, 0.97, 40, {})
    assert _reported_text(unaxed, protocol)[0] == "S -0.50 D  C +1.00 D"
    axed = ResultRecord("+0.50 / -1.00 x 180", 0.5, -1.0, 180.0, -0.02, 0.97, 40, {})
    assert _reported_text(axed, protocol)[0] == "-0.50 / +1.00 x 090  (minus cylinder: +0.50 / -1.00 x 180)"


def test_the_command_to_continue_gives_every_short_eye_its_recommended_trials():
    # --trials is a budget per eye: the largest of answers so far plus the trials recommended
    od = EndPoint("OD", False, 0.41, 0.95, "-1.00 / -0.50 x 180", more_trials=19, n_trials=30)
    os_ = EndPoint("OS", False, 0.70, 0.95, "-1.25 / -0.25 x 010", more_trials=8, n_trials=36)
    assert continue_command([od, os_], 7) == "lensopt run --resume 7 --trials 49"
    assert continue_command([od], 7, "/data/s.db") == "lensopt run --resume 7 --trials 49 --db /data/s.db"
    # an eye that reached its target needs nothing; no eye short, no command
    done = EndPoint("OS", True, 0.97, 0.95, "-1.25 / -0.25 x 010", n_trials=44)
    assert continue_command([od, done], 7) == "lensopt run --resume 7 --trials 49"
    assert continue_command([done], 7) is None
    # a search without a confidence (duels) has no target to continue towards
    duel = EndPoint("OD", True, None, math.nan, "-1.00 / -0.50 x 180", n_trials=40)
    assert continue_command([duel], 7) is None
    # no number can be justified: the most an estimate would give (twice the answers more), said so
    unknown = EndPoint("OD", False, 0.41, 0.95, "-1.00 / -0.50 x 180", n_trials=30)
    ceiling = (
        f"--trials {int(30 + MAX_EXTRAPOLATION * 30)}  (at most; the confidence so far does not say how many more)"
    )
    assert continue_command([unknown], 7) == f"lensopt run --resume 7 {ceiling}"
    # one eye without a number of its own: the other's budget (36 + 8) gives it more trials too
    assert continue_command([unknown, os_], 7) == "lensopt run --resume 7 --trials 44"
    # ... unless that budget gives it none: then the ceiling again
    long = EndPoint("OD", False, 0.41, 0.95, "-1.00 / -0.50 x 180", n_trials=50)
    assert continue_command([long, os_], 7).startswith(
        f"lensopt run --resume 7 --trials {int(50 + MAX_EXTRAPOLATION * 50)}  (at most"
    )


def test_a_fixed_design_short_of_its_target_reports_its_estimate_and_asks_for_nothing_more():
    # a protocol without [stop] (a study's fixed number of trials): the estimate, labelled, with its
    # intervals; no trials recommended and no command to continue, even with a rising trend
    study = EndPoint(
        None, False, 0.62, 0.95, "S -0.50 D  C -1.00 D", ("95% intervals: S -0.9 to -0.1 D",), 40, 260, True
    )
    assert study.lines() == [
        "S -0.50 D  C -1.00 D (estimate, not a prescription); confidence 0.62 < 0.95 after the protocol's 260 "
        "trials (no [stop]: a fixed number)",
        "95% intervals: S -0.9 to -0.1 D",
    ]
    assert study.closing_lines() == [study.advice(), "95% intervals: S -0.9 to -0.1 D"]
    assert continue_command([study], 7) is None
    # a fixed design that reached the target is a prescription like any other
    reached = EndPoint(
        "OD", True, 0.97, 0.95, "-1.25 / -0.75 x 170", ("predicted acuity +0.02 logMAR",), fixed_design=True
    )
    assert reached.lines() == ["OD  -1.25 / -0.75 x 170", "predicted acuity +0.02 logMAR"]


def test_intervals_beside_a_plus_cylinder_lens_say_they_are_of_the_minus_cylinder_form():
    import types

    from lensopt.experiment.end_point import _reported_text

    intervals = {"sphere_d": [0.25, 0.75], "cylinder_d": [-1.25, -0.75], "axis_deg": [175.0, 185.0]}
    axed = ResultRecord("+0.50 / -1.00 x 180", 0.5, -1.0, 180.0, -0.02, 0.97, 40, intervals)
    plus = types.SimpleNamespace(lens=types.SimpleNamespace(cylinder="plus"))
    minus = types.SimpleNamespace(lens=types.SimpleNamespace(cylinder="minus"))
    assert _reported_text(axed, plus)[1][-1].startswith("95% intervals (minus cylinder): S +0.25 to +0.75 D")
    assert _reported_text(axed, minus)[1][-1].startswith("95% intervals: S +0.25 to +0.75 D")
    # a sphere (no cylinder to transpose) reads the same in either form: no label
    sphere = ResultRecord("+0.50 DS", 0.5, 0.0, 180.0, -0.02, 0.97, 40, {"sphere_d": [0.25, 0.75]})
    assert _reported_text(sphere, plus)[1][-1] == "95% intervals: S +0.25 to +0.75 D"
    assert prescription_lines(axed, 0.95, "plus")[1].startswith("95% intervals (minus cylinder): ")


def test_a_comparisons_best_lens_on_the_box_edge_comes_with_a_warning():
    """A two-parameter duel session ended in a corner of the lens box (S -4.00 D C +4.00 D after 20
    duels): the end point says so, and what to do; inside the box it says nothing more."""
    import types

    from lensopt.experiment.end_point import end_point

    protocol = types.SimpleNamespace(
        optimizer=types.SimpleNamespace(sphere_bounds_d=(-4.0, 4.0), cylinder_bounds_d=(-4.0, 4.0)),
        lens=types.SimpleNamespace(axis_deg=0.0, cylinder="minus"),
        lens_step_d=None,
        feedback_mode="duel",
    )

    def duels(best):
        return types.SimpleNamespace(n_trials=20, best=lambda: best)  # no confidence(): a comparison

    corner = end_point(duels((-4.0, 3.95)), protocol, None, [], ())
    # a sphere-and-cylinder search by comparisons: its best lens, an estimate (no prescription stored)
    assert not corner.confident and corner.estimate_only and len(corner.details) == 2
    assert corner.details[1].startswith(
        "warning: the best lens is on the edge of the lens box (sphere -4.00 D, cylinder +3.95 D)"
    )
    assert "lensopt run --resume N --trials M" in corner.details[1] and corner.details[1] in corner.closing_lines()
    inside = end_point(duels((-1.0, -0.75)), protocol, None, [], ())
    assert len(inside.details) == 1 and "warning" not in inside.details[0]


def test_a_comparisons_lens_from_fewer_than_40_is_no_prescription_yet_on_the_console():
    """Duels and rankings have no confidence to hold a prescription to: from fewer comparisons than
    lensopt's accuracy was measured after (40), the closing console says "not enough answers to
    prescribe", how many more, and the command to continue to 40; from 40, the lens."""
    import types

    from lensopt.experiment.end_point import end_point

    protocol = types.SimpleNamespace(lens=types.SimpleNamespace(cylinder="minus"), feedback_mode="ranking")
    result = ResultRecord("-1.00 / -0.75 x 179", -1.0, -0.75, 179.0, None, None, 2, {"sphere_d": [-1.53, -0.01]})
    for n in (2, 39, 40, 41):
        rankings = types.SimpleNamespace(n_trials=n)  # no confidence(): a comparison
        ending = end_point(rankings, protocol, "OD", [result], ())
        assert ending.confident == (n >= 40)
        if n >= 40:
            assert ending.headline() == "OD  -1.00 / -0.75 x 179" and ending.advice() == ""
            continue
        assert ending.headline() == "OD  not enough answers to prescribe"
        assert ending.advice() == (
            f"only {n} rankings; lensopt's accuracy was measured after 40; about {40 - n} more rankings recommended"
        )
        assert "-1.00 / -0.75 x 179" not in " ".join(ending.lines())
        assert continue_command([ending], 7) == "lensopt run --resume 7 --trials 40"


def test_the_console_and_the_log_hold_a_lens_to_the_printed_records_rule():
    """What the closing console and the log call a prescription is what the sessions list and the
    printed record call one (lensopt.store.verdict.withheld_reason): a confident two-parameter
    cylinder without an axis is an estimate there too (the log said "prescription: S -0.50 D  C +1.00 D"
    while the record said "a cylinder without an axis"), a comparison from 8 duels too (the log
    said "prescription:" above "not enough answers")."""
    import types

    from lensopt.experiment.end_point import end_point
    from lensopt.store.verdict import NO_AXIS_REASON

    protocol = types.SimpleNamespace(
        lens=types.SimpleNamespace(cylinder="minus", axis_deg=0.0, step_d=0.25),
        feedback_mode="letters",
        stop=types.SimpleNamespace(confidence=0.95),
        lens_step_d=0.25,
    )
    no_axis = ResultRecord("S -0.50 D  C +1.00 D", -0.5, 1.0, None, 0.0, 0.97, 40, {"sphere_d": [-0.75, -0.25]})
    letters = types.SimpleNamespace(n_trials=40, confidence=lambda: 0.97, history=())
    ending = end_point(letters, protocol, "OD", [no_axis], ())
    assert not ending.confident and ending.headline() == "OD  S -0.50 D  C +1.00 D (estimate, not a prescription)"
    assert ending.advice() == NO_AXIS_REASON and continue_command([ending], 3) is None  # more trials would not mend it
    assert prescription_lines(no_axis, 0.95)[0].startswith("estimate, not a prescription: S -0.50 D  C +1.00 D")
    sphere = ResultRecord("-0.50 DS", -0.5, 0.0, None, 0.0, 0.97, 40, {})
    assert end_point(letters, protocol, "OD", [sphere], ()).confident
    duels = ResultRecord("-1.00 / -0.50 x 090", -1.0, -0.5, 90.0, None, None, 8, {})
    assert prescription_lines(duels, 0.95)[0] == "estimate, not a prescription: -1.00 / -0.50 x 090"
    assert prescription_lines(replace(duels, n_trials=40), 0.95)[0].startswith("prescription: ")


def test_a_lens_no_trial_came_near_is_said_to_be_predicted_not_measured():
    """An acuity-law session whose trials were all a diopter from the lens it reports: the end point
    says that lens was not tried, how far the nearest lens tried is, and to check it on the chart;
    once the patient has read through it, nothing more. At --axis 90 a plus cylinder is stored
    transposed (axis 180), and the trials, along 090, are judged along 090."""
    from lensopt.experiment.end_point import end_point
    from lensopt.refraction.acuity_law import AcuityLawOptimizer
    from lensopt.refraction.lens import Lens
    from lensopt.refraction.trial import Trial

    def protocol(axis_deg):
        return types.SimpleNamespace(
            lens=types.SimpleNamespace(cylinder="minus", axis_deg=axis_deg, step_d=0.25),
            feedback_mode="letters",
            stop=None,  # a fixed design: its estimate is shown with its details, whatever its confidence
            lens_step_d=0.25,
        )

    optimizer = AcuityLawOptimizer(seed=1, lens_step_d=0.25)
    for sphere_d, correct in ((-2.0, False), (0.0, False), (-2.0, False), (0.0, False)):
        optimizer.tell(Trial(sphere_d=sphere_d, cylinder_d=0.0, letter_logmar=0.3), correct)
    sphere_d, cylinder_d = optimizer.best()
    result = ResultRecord("-1.00 DS", sphere_d, cylinder_d, 180.0, 0.0, 0.5, 4, {})
    # Raasch's blur of each residual on one meridian, b² = ½(r_S² + (r_S + r_C)²)
    nearest_d = min(math.sqrt(0.5 * ((sphere_d - s) ** 2 + (sphere_d - s + cylinder_d) ** 2)) for s in (-2.0, 0.0))
    assert nearest_d > 0.5  # the law puts the best between the lenses tried
    ending = end_point(optimizer, protocol(180.0), "OD", [result], ())
    assert ending.not_tried == ending.lens_details[-1] == untried_note(nearest_d)
    assert ending.not_tried in ending.lines() and ending.not_tried in ending.closing_lines()
    optimizer.tell(Trial(sphere_d=sphere_d, cylinder_d=cylinder_d, letter_logmar=0.3), True)
    tried = end_point(optimizer, protocol(180.0), "OD", [replace(result, predicted_acuity_logmar=-0.1)], ())
    assert tried.not_tried == "" and all("not tried" not in line for line in tried.lines())
    # what the patient read through it instead: a +0.30 letter, far larger (more than three lines)
    # than the -0.10 predicted through it (the stored result's), so its acuity is still to be checked
    assert ending.read_through == ""
    assert tried.read_through == (
        "read through this lens only with letters far larger than its predicted acuity (1 of 1 letter right, "
        "at +0.30 logMAR), so its acuity is predicted, not measured; check it on the chart"
    )
    assert tried.lens_details[-1] == tried.read_through and tried.read_through in tried.closing_lines()
    # predicted at +0.20 logMAR (the stored result's), the +0.30 letter measured it, beside the prediction
    measured = end_point(optimizer, protocol(180.0), "OD", [replace(result, predicted_acuity_logmar=0.2)], ())
    assert measured.read_through == "read through this lens: 1 of 1 letter right, at +0.30 logMAR"
    # the lens tried, S -1.00 C +0.75 along 090, stored as -0.25 / -0.75 x 180
    transposed = AcuityLawOptimizer(seed=1, lens_step_d=0.25)
    transposed.tell(Trial(sphere_d=-1.0, cylinder_d=0.75, letter_logmar=0.3), True)
    stored = Lens(-1.0, 0.75, 90.0).minus_cylinder()
    plus = ResultRecord(stored.format(), stored.sphere_d, stored.cylinder_d, stored.axis_deg, 0.0, 0.5, 1, {})
    assert end_point(transposed, protocol(90.0), "OD", [plus], ()).not_tried == ""


def test_the_ceiling_of_the_command_to_continue_is_a_budget_a_session_may_have():
    many = EndPoint("OD", False, 0.41, 0.95, "-1.00 / -0.50 x 180", n_trials=2000)  # 3 x 2000 is past it
    command = continue_command([many], 7)
    assert command.startswith(f"lensopt run --resume 7 --trials {MAX_TRIALS}  (at most")
    assert MAX_TRIALS < 3 * 2000


def test_the_command_to_continue_carries_the_window_options_the_session_ran_with():
    od = EndPoint("OD", False, 0.41, 0.95, "-1.00 / -0.50 x 180", more_trials=19, n_trials=30)
    assert (
        continue_command([od], 7, "/data/s.db", options=" --no-fullscreen")
        == "lensopt run --resume 7 --trials 49 --no-fullscreen --db /data/s.db"
    )


def test_the_console_and_the_log_name_an_eyes_start_in_one_wording():
    """The closing console's line under an eye's result and the log's beside it are one function's
    (start_note), in the protocol's cylinder convention; the log's names the eye."""
    from lensopt.experiment.end_point import end_point, start_note
    from lensopt.refraction.lens import Lens

    protocol = types.SimpleNamespace(
        lens=types.SimpleNamespace(cylinder="plus", axis_deg=0.0, step_d=0.25),
        feedback_mode="letters",
        stop=types.SimpleNamespace(confidence=0.95),
        lens_step_d=0.25,
    )
    result = ResultRecord("-1.00 / -0.50 x 090", -1.0, -0.5, 90.0, 0.0, 0.97, 40, {})
    letters = types.SimpleNamespace(n_trials=40, confidence=lambda: 0.97, history=(), start=Lens(-2.25, -0.75, 180.0))
    assert start_note(letters, "OD", "plus") == "OD: started from -3.00 / +0.75 x 090"
    assert end_point(letters, protocol, "OD", [result], ()).started_from == "started from -3.00 / +0.75 x 090"
    assert start_note(letters, None, "minus") == "started from -2.25 / -0.75 x 180"
    assert start_note(replace(result), "OD") is None  # no start (a two-parameter search): no line


def test_the_closing_console_shows_a_short_eyes_lens_only_as_a_provisional_estimate():
    """An eye short of its target: the closing console said "not enough answers" and the advice, and
    nothing of where the search stood, while the log, the dashboard and the printed record give the
    lens as a provisional estimate; a clinician who must end the visit now sees it there too, in the
    dashboard's words, under the advice. Never as a headline, never for an eye without answers."""
    short = EndPoint("OD", False, 0.41, 0.95, "-1.00 / -0.50 x 180", more_trials=19, n_trials=30)
    assert short.headline() == "OD  not enough answers to prescribe"
    assert short.closing_lines() == [short.advice(), "provisional estimate -1.00 / -0.50 x 180, not for prescribing"]
    assert "-1.00 / -0.50 x 180" not in short.headline()
    started = replace(short, started_from="started from -1.25 / -0.50 x 180")
    assert started.closing_lines()[1:] == [short.provisional(), "started from -1.25 / -0.50 x 180"]
    # a prescription, an estimate shown as such, an eye without answers: no provisional line
    assert EndPoint("OD", True, 0.97, 0.95, "-1.00 / -0.50 x 180", n_trials=40).provisional() == ""
    study = EndPoint("OD", False, 0.41, 0.95, "-1.00 / -0.50 x 180", n_trials=30, fixed_design=True)
    assert study.provisional() == "" and "provisional" not in " ".join(study.closing_lines())
    assert replace(short, n_trials=0).closing_lines() == [replace(short, n_trials=0).advice()]
