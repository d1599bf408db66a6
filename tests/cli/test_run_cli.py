"""`lensopt run` on bad input: one line naming the problem, exit code 2, no traceback, nothing lost.

Each case runs ``python -m lensopt run ...`` in a subprocess, as a person would. All of them fail
before a window opens, so they need no display.
"""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lensopt.cli import build_parser, main
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.run_request import RunRequest
from lensopt.store import SessionStore, TrialRecord

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "protocols" / "demo-simulated.toml"


def lensopt_run(*args, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "lensopt", "run", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_one_line_error(result, *fragments):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("lensopt run: error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def run_in_process(capsys, *args):
    """Same dispatcher in this process (cheaper); returns a result shaped like subprocess.run's."""
    code = main(["run", *map(str, args)])
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, captured.out, captured.err)


def edited_demo(tmp_path, old, new):
    text = DEMO.read_text()
    assert old in text
    path = tmp_path / "p.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_run_is_registered_with_its_options():
    args = build_parser().parse_args(
        [
            "run",
            "--protocol",
            "p.toml",
            "--participant",
            "x",
            "--observer",
            "simulated",
            "--seed",
            "3",
            "--trials",
            "5",
            "--save-frames",
            "d",
        ]
    )
    assert args.command == "run" and args.seed == 3 and args.trials == 5 and args.observer == "simulated"
    assert callable(args.handler)


def test_a_protocol_missing_a_field_is_named(tmp_path):
    protocol = edited_demo(tmp_path, 'rule = "ucb-ald"\n', "")
    assert_one_line_error(
        lensopt_run("--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "p.toml",
        "missing field optimizer.rule",
    )


def test_an_out_of_range_field_is_named_with_its_range(tmp_path, capsys):
    protocol = edited_demo(tmp_path, "distance_cm = 300.0", "distance_cm = 0.5")
    assert_one_line_error(
        run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "calibration.distance_cm must be a number in [5, 100000]",
    )


def test_an_unknown_key_is_named(tmp_path, capsys):
    protocol = edited_demo(tmp_path, "[feedback]\n", "[feedback]\nsound = true\n")
    assert_one_line_error(
        run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "unknown key feedback.sound",
    )


@pytest.mark.parametrize(
    "edits, expected",
    [
        # a quit key no keyboard reports left the clinician no way to quit
        ((('quit = "q"', 'quit = "notakey"'),), ("keys.quit must be a PsychoPy key name", "got 'notakey'", "'escape'")),
        # the acuity-law rule has no GP: a protocol's ``inference`` was silently ignored
        (
            (('rule = "ucb-ald"', 'rule = "acuity-law"'), ("n_initial = 5\n", "")),
            (
                "optimizer.inference sets the GP's inference, and optimizer.rule 'acuity-law' has no GP",
                "remove optimizer.inference",
            ),
        ),
        # no lens of the [-4, 4] D box could correct a -9 D sphere; `lensopt simulate --true-sphere` refuses it too
        (
            (("sphere_d = -1.25", "sphere_d = -9.0"),),
            ("simulated.sphere_d -9 is outside the lens box optimizer.sphere_bounds_d [-4, 4] D", "widen the box"),
        ),
    ],
    ids=["quit-key", "inference-with-acuity-law", "patient-outside-box"],
)
def test_a_protocol_a_new_session_cannot_run_is_one_line_and_creates_no_database(tmp_path, capsys, edits, expected):
    (old, new), *more = edits
    protocol = edited_demo(tmp_path, old, new)
    for old, new in more:
        protocol.write_text(protocol.read_text().replace(old, new))
    db = tmp_path / "s.db"
    assert_one_line_error(run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", db), *expected)
    assert not db.exists()


def test_a_protocol_whose_optimizer_refuses_it_leaves_no_database_file(tmp_path, capsys):
    """A duel shows two phoropter lenses; a box holding one is refused when the optimizer is made,
    which is now before the database is opened (it left an empty database file)."""
    text = (REPO / "protocols" / "clinical-duel.toml").read_text()
    for old, new in (
        ("sphere_bounds_d = [-4.0, 4.0]", "sphere_bounds_d = [0.1, 0.35]"),
        ("cylinder_bounds_d = [-4.0, 4.0]", "cylinder_bounds_d = [-0.1, 0.0]"),
        ("sphere_d = -1.25", "sphere_d = 0.2"),
        ("cylinder_d = -0.75", "cylinder_d = -0.05"),
    ):
        assert old in text
        text = text.replace(old, new, 1)
    protocol = tmp_path / "duel.toml"
    protocol.write_text(text)
    db = tmp_path / "s.db"
    args = ("--protocol", protocol, "--participant", "a", "--observer", "simulated", "--no-fullscreen", "--db", db)
    assert_one_line_error(
        run_in_process(capsys, *args),
        "hold 1 phoropter lens on a 0.25 D step, and a duel shows 2 different ones: widen the bounds",
    )
    assert not db.exists()


def test_a_simulated_patient_outside_the_box_is_not_a_protocol_error_so_stored_sessions_still_load(tmp_path):
    # the check is made for new sessions only: the protocol itself (as a stored session re-reads it) loads,
    # and a human observer lifts it; with a [start] the box lies around the start: a start near the
    # patient (-1.25 / +5.50 x 180 is +4.25 / -5.50 x 090) lifts it, one far from it does not
    protocol = load_protocol(edited_demo(tmp_path, "cylinder_d = -0.75", "cylinder_d = 5.5"))
    assert "simulated.cylinder_d 5.5 is outside" in protocol.simulated_patient_problem()
    assert protocol.simulated_patient_problem(observer="human") is None
    assert protocol.with_start("+4.00 / -5.25 x 090").simulated_patient_problem() is None
    far = protocol.with_start("-1.00 / -0.50 x 180").simulated_patient_problem()
    assert far.startswith("the simulated patient -1.25 / +5.50 x 180 is outside the box around the start")
    assert load_protocol(DEMO).simulated_patient_problem() is None


def test_a_calibration_that_cannot_render_the_letter_sizes_is_refused(tmp_path):
    # at 10 cm a 1 px stroke is already logMAR 0.98: nothing in [-0.3, 0.5] can be drawn
    protocol = edited_demo(tmp_path, "distance_cm = 300.0", "distance_cm = 10.0")
    protocol.write_text(
        protocol.read_text().replace("letter_bounds_logmar = [-0.3, 1.0]", "letter_bounds_logmar = [-0.3, 0.5]")
    )
    result = lensopt_run("--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db")
    assert_one_line_error(
        result, "optimizer.letter_bounds_logmar = [-0.3, 0.5] asks for letters smaller", "its smallest is logMAR 0.98"
    )


@pytest.mark.parametrize(
    ("old", "new", "fragments"),
    [
        (
            "letter_bounds_logmar = [-0.3, 1.0]",
            "letter_bounds_logmar = [-0.9, -0.8]",
            ("optimizer.letter_bounds_logmar = [-0.9, -0.8] asks for letters smaller", "raise them to within"),
        ),
        (
            "letter_bounds_logmar = [-0.3, 1.0]",
            "letter_bounds_logmar = [1.8, 2.0]",
            ("optimizer.letter_bounds_logmar = [1.8, 2] asks for letters larger", "lower them to within"),
        ),
        (
            "min_stroke_px = 1.0",
            "min_stroke_px = 50",
            ("calibration.min_stroke_px = 50 px", "lower calibration.min_stroke_px"),
        ),
        (
            "min_stroke_px = 1.0",
            'min_stroke_px = 1.0\nmonitor = "nosuchmonitor"',
            ("calibration.monitor = 'nosuchmonitor': no PsychoPy monitor named", "Monitor Center"),
        ),
    ],
)
def test_a_screen_that_cannot_show_the_protocols_letters_is_refused_before_any_database_file(
    tmp_path, old, new, fragments
):
    """docs/protocols.md: errors come before any database file is made. These depend on the screen
    and came after the database and its folders were created, without naming the file or the key
    (and min_stroke_px's fix named the viewing distance or the letter bounds)."""
    if not os.environ.get("DISPLAY"):
        pytest.skip("a new session checks the display first: run under xvfb-run")
    protocol = edited_demo(tmp_path, old, new)
    db = tmp_path / "new" / "s.db"
    result = lensopt_run("--protocol", protocol, "--participant", "a", "--db", db)
    assert_one_line_error(result, f"{protocol}: ", *fragments)
    assert not db.parent.exists()


def test_a_missing_participant_or_protocol_is_one_line(tmp_path, capsys):
    assert_one_line_error(run_in_process(capsys, "--protocol", DEMO, "--db", tmp_path / "s.db"), "--participant")
    assert_one_line_error(run_in_process(capsys, "--participant", "a", "--db", tmp_path / "s.db"), "--protocol")


def test_a_corrupt_database_is_refused_and_left_alone(tmp_path):
    db = tmp_path / "s.db"
    db.write_bytes(b"this is not sqlite at all" * 100)
    result = lensopt_run("--protocol", DEMO, "--participant", "a", "--db", db)
    assert_one_line_error(result, str(db))
    assert db.read_bytes() == b"this is not sqlite at all" * 100


def test_a_locked_database_is_refused_and_no_answered_trial_is_lost(tmp_path):
    db = tmp_path / "s.db"
    with SessionStore(db) as store:
        sid = store.create_session("p", {}, {}, {}, 1)
        store.append_trial(sid, TrialRecord(1, -1.0, 0.5, 0.2, "K", "K", True, 0.8, 1.7e9, 1.7e9 + 0.8))
    locker = sqlite3.connect(db, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        result = lensopt_run("--protocol", DEMO, "--participant", "a", "--db", db, timeout=120)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert_one_line_error(result, "locked")
    with SessionStore(db, readonly=True) as store:
        assert len(store.sessions()) == 1
        assert [t.letter for t in store.trials(sid)] == ["K"]


def test_resuming_a_session_that_does_not_exist_is_one_line(tmp_path, capsys):
    db = tmp_path / "s.db"
    with SessionStore(db) as store:
        store.create_session("p", {}, {}, {}, 1)
    assert_one_line_error(run_in_process(capsys, "--resume", 42, "--db", db), "42")


DUEL = REPO / "protocols" / "clinical-duel.toml"


def edited_duel(tmp_path, old, new):
    text = DUEL.read_text()
    assert old in text
    path = tmp_path / "duel.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_an_unknown_feedback_mode_is_one_line_listing_the_modes(tmp_path):
    protocol = edited_duel(tmp_path, 'feedback = "duel"', 'feedback = "rank"')
    assert_one_line_error(
        lensopt_run("--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "duel.toml",
        "protocol.feedback must be one of 'letters', 'duel', 'ranking', got 'rank'",
    )
    with SessionStore(tmp_path / "s.db") as store:
        assert store.sessions() == []  # refused before a session was created


def test_duplicate_duel_answer_keys_are_one_line(tmp_path, capsys):
    protocol = edited_duel(tmp_path, 'same = "s"', 'same = "2"')
    assert_one_line_error(
        run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "keys.second and keys.same cannot share the key '2'",
    )


def test_a_letter_rule_for_duels_is_one_line_naming_the_duel_rules(tmp_path, capsys):
    protocol = edited_duel(tmp_path, 'rule = "mpes-ald"', 'rule = "ucb-ald"')
    assert_one_line_error(
        run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "optimizer.rule 'ucb-ald' does not work with duel.model = 'ties'",
        "'mpes-ald', 'random'",
    )


RANKING = REPO / "protocols" / "clinical-ranking.toml"


def edited_ranking(tmp_path, old, new):
    text = RANKING.read_text()
    assert old in text
    path = tmp_path / "ranking.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_five_lenses_per_ranking_is_one_line_naming_the_range(tmp_path, capsys):
    protocol = edited_ranking(tmp_path, "lenses = 3 ", "lenses = 5 ")
    assert_one_line_error(
        run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "ranking.toml",
        "ranking.lenses must be an integer in [3, 4], got 5",
    )


def test_duplicate_lens_keys_are_one_line(tmp_path):
    protocol = edited_ranking(tmp_path, 'lenses = ["1", "2", "3"]', 'lenses = ["1", "2", "1"]')
    assert_one_line_error(
        lensopt_run("--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "keys.lenses names the key '1' twice",
    )
    with SessionStore(tmp_path / "s.db") as store:
        assert store.sessions() == []  # refused before a session was created


# --------------------------------------------------------------------------- the starting refraction


def with_start(tmp_path, body):
    path = tmp_path / "start.toml"
    path.write_text(DEMO.read_text() + f"\n[start]\n{body}\n")
    return path


def no_session_created(db):
    if not Path(db).exists():
        return True
    with SessionStore(db, readonly=True) as store:
        return store.sessions() == []


def test_a_start_that_is_not_a_lens_is_one_line(tmp_path, capsys):
    db = tmp_path / "s.db"
    protocol = with_start(tmp_path, 'refraction = "abc"')
    assert_one_line_error(
        run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", db),
        "start.toml",
        "start.refraction",
        "cannot read 'abc' as a lens",
    )
    assert no_session_created(db)


def test_a_start_axis_outside_1_to_180_is_one_line(tmp_path, capsys):
    protocol = with_start(tmp_path, 'refraction = "-1.00 / -0.50 x 200"')
    assert_one_line_error(
        run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "start.refraction",
        "axis 200",
        "outside 1-180",
    )


def test_an_unknown_start_key_is_named_with_the_allowed_keys(tmp_path, capsys):
    protocol = with_start(tmp_path, 'refraction = "-1.00 / -0.50 x 180"\naxis_step_deg = 5')
    assert_one_line_error(
        run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "unknown key start.axis_step_deg",
        "refraction, m_half_width_d, j_half_width_d",
    )


def test_a_start_box_of_zero_width_is_one_line(tmp_path, capsys):
    protocol = with_start(tmp_path, 'refraction = "-1.00 / -0.50 x 180"\nm_half_width_d = 0')
    assert_one_line_error(
        run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "start.m_half_width_d must be a number in (0, 10]",
    )


def test_a_malformed_start_option_is_one_line(tmp_path, capsys):
    db = tmp_path / "s.db"
    for text, fragment in (
        ("abc", "cannot read 'abc'"),
        ("−1.00 −0.50 × 200", "outside 1-180"),
        ("-1.00/-0.50x200", "outside 1-180"),  # compact, beginning with a minus: still read as the start
        ("-25.00 DS", "beyond a phoropter's ±20 D; refract this eye with trial lenses"),
        ("-18.00 / -3.00 x 180", "a meridian of -21.00 D"),
    ):
        assert_one_line_error(
            run_in_process(capsys, "--protocol", DEMO, "--participant", "a", "--db", db, "--start", text),
            "--start",
            fragment,
        )
    assert no_session_created(db)


def test_start_with_the_ties_duel_protocol_is_one_line_naming_the_prescription_duel_protocol(tmp_path):
    db = tmp_path / "s.db"
    result = lensopt_run(
        "--protocol", "clinical-duel", "--participant", "a", "--db", db, "--start", "-1.00 / -0.50 x 180"
    )
    assert_one_line_error(result, "duel.model = 'probit'", "clinical-prescription-duel")
    assert no_session_created(db)


@pytest.mark.parametrize("protocol", ["clinical-prescription-duel", "clinical-prescription-ranking"])
def test_the_prescription_comparison_protocols_without_a_start_are_one_line(tmp_path, protocol):
    db = tmp_path / "s.db"
    result = lensopt_run("--protocol", protocol, "--participant", "a", "--db", db)
    assert_one_line_error(result, "--start '-1.00 / -0.50 x 180'")
    assert not db.exists()


def test_a_malformed_start_with_the_prescription_ranking_protocol_is_one_line(tmp_path):
    db = tmp_path / "s.db"
    result = lensopt_run(
        "--protocol", "clinical-prescription-ranking", "--participant", "a", "--db", db, "--start", "abc"
    )
    assert_one_line_error(result, "cannot read 'abc' as a lens")
    assert no_session_created(db)


def test_a_travel_limit_in_a_ranking_protocol_with_a_start_is_one_line(tmp_path, capsys):
    """A ranking protocol with a [start] searches the full prescription (no longer refused), but
    without a travel limit: ``[lens] max_step_d`` with it is one line."""
    text = (
        (REPO / "protocols" / "clinical-ranking.toml")
        .read_text()
        .replace("step_d = 0.25", "step_d = 0.25\nmax_step_d = 0.5")
    )
    path = tmp_path / "r.toml"
    path.write_text(text + '\n[start]\nrefraction = "plano"\n')
    assert_one_line_error(
        run_in_process(capsys, "--protocol", path, "--participant", "a", "--db", tmp_path / "s.db"),
        "set lens.max_step_d = 0 in this ranking protocol",
    )


def test_the_bracketing_rule_without_a_start_is_one_line(tmp_path, capsys):
    protocol = edited_demo(tmp_path, 'rule = "ucb-ald"', 'rule = "bracket-ald"')
    assert_one_line_error(
        run_in_process(capsys, "--protocol", protocol, "--participant", "a", "--db", tmp_path / "s.db"),
        "'bracket-ald' searches the full prescription",
        "[start]",
    )


def without_display():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return env


def test_without_a_display_run_is_one_line_and_creates_no_session_nor_database(tmp_path):
    db = tmp_path / "s.db"
    result = subprocess.run(
        [sys.executable, "-m", "lensopt", "run", "--protocol", "demo-simulated", "--participant", "a", "--db", db],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=without_display(),
    )
    assert_one_line_error(result, "no display", "DISPLAY is not set", "xvfb-run")
    assert not db.exists()  # an empty database would say "no sessions" where there never was one
    listing = subprocess.run(
        [sys.executable, "-m", "lensopt", "sessions", "--db", db], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert "no session database at" in listing.stdout + listing.stderr, listing


def stored_demo_session(db, status):
    """A demo session stored as ``lensopt run`` stores it, left ``status``, without trials."""
    from lensopt.experiment.modes import mode_for
    from lensopt.experiment.windows import calibration_from_protocol

    protocol = load_protocol(DEMO)
    optimizer = mode_for(protocol).new_optimizer(protocol, 1, protocol.optimizer.letter_bounds_logmar)
    with SessionStore(db) as store:
        sid = store.create_session(
            "p", protocol.to_dict(), calibration_from_protocol(protocol).to_dict(), optimizer.settings_dict(), 1
        )
        store.set_status(sid, status)
    return sid


def test_resuming_without_a_display_is_one_line_and_leaves_the_session_as_it_was(tmp_path):
    db = tmp_path / "s.db"
    sid = stored_demo_session(db, "aborted")
    result = subprocess.run(
        [sys.executable, "-m", "lensopt", "run", "--resume", str(sid), "--db", db],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=without_display(),
    )
    assert_one_line_error(result, "no display")
    with SessionStore(db, readonly=True) as store:
        assert store.session(sid).status == "aborted" and len(store.sessions()) == 1


def run_without(module, tmp_path, *args, env=None):
    """``lensopt run ARGS`` in a subprocess where ``module`` is not installed, nor in the processes
    it starts (the dashboard's): a ``sitecustomize`` on their path hides it."""
    hider = tmp_path / "without"
    hider.mkdir(exist_ok=True)
    (hider / "sitecustomize.py").write_text(
        f"import sys\nsys.modules[{module!r}] = None  # as if not installed: importing it raises ModuleNotFoundError\n"
    )
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(hider), env.get("PYTHONPATH"))))
    return subprocess.run(
        [sys.executable, "-m", "lensopt", "run", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


DASHBOARD_REFUSAL = (
    "--dashboard needs lensopt's 'dashboard' part (PyQt5 not installed): pip install 'lensopt[dashboard]', "
    "or run the session without --dashboard"
)


@pytest.mark.display
@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (run under xvfb-run)")
def test_run_dashboard_without_pyqt5_is_one_line_before_the_session_starts(tmp_path):
    """With lensopt[experiment] only, ``run --dashboard`` ran the session and the dashboard's process
    said "PyQt5 is not installed" after the first trial; now nothing starts and no database is made."""
    db = tmp_path / "s.db"
    result = run_without(
        "PyQt5",
        tmp_path,
        "--protocol",
        "demo-simulated",
        "--participant",
        "a",
        "--trials",
        "2",
        "--dashboard",
        "--db",
        db,
    )
    assert_one_line_error(result, DASHBOARD_REFUSAL)
    assert result.stdout == "" and not db.exists()


def test_resuming_with_the_dashboard_without_pyqt5_is_one_line_and_leaves_the_session_as_it_was(tmp_path):
    db = tmp_path / "s.db"
    sid = stored_demo_session(db, "aborted")
    result = run_without("PyQt5", tmp_path, "--resume", sid, "--dashboard", "--db", db, env=without_display())
    assert_one_line_error(result, DASHBOARD_REFUSAL)  # said before the display is looked for
    with SessionStore(db, readonly=True) as store:
        assert store.session(sid).status == "aborted" and len(store.sessions()) == 1


def test_the_options_a_resume_ignores_are_noted_on_stderr_not_among_the_sessions_output(tmp_path):
    """``--resume`` with a protocol, a seed, a participant...: each "is ignored" note went to stdout,
    among what the session does; they are notes on stderr (here the resume then stops: no display)."""
    db = tmp_path / "s.db"
    sid = stored_demo_session(db, "aborted")
    result = subprocess.run(
        [sys.executable, "-m", "lensopt", "run", "--resume", str(sid), "--db", db, "--protocol", DEMO]
        + ["--seed", "99", "--participant", "someone else", "--eye", "OD"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=without_display(),
    )
    assert "is ignored" not in result.stdout, result.stdout
    notes = [line for line in result.stderr.splitlines() if line.startswith("lensopt run: note: ")]
    for ignored in (str(DEMO), "--seed 99", "--participant someone else", "--eye OD"):
        assert any(line.endswith(f"{ignored} is ignored") for line in notes), result.stderr
    assert len(notes) == 4 and "Traceback" not in result.stderr


def test_a_session_left_running_without_a_trial_is_not_offered_as_the_latest(tmp_path, capsys):
    db = tmp_path / "s.db"
    finished = stored_demo_session(db, "finished")
    left = stored_demo_session(db, "running")
    with SessionStore(db, readonly=True) as store:
        assert store.latest_session_id() == left
        assert store.latest_session_id(skip_empty_running=True) == finished
    with SessionStore(db) as store:
        store.append_trial(left, TrialRecord(1, -1.0, 0.5, 0.2, "K", "K", True, 0.8, 1.7e9, 1.7e9 + 0.8))
        assert store.latest_session_id(skip_empty_running=True) == left


def test_dashboard_latest_with_only_an_empty_running_session_names_the_session_it_passes_over(tmp_path, capsys):
    """``lensopt sessions`` lists the session (interrupted, 0 trials) that ``--latest`` passes over:
    "no session in s.db yet" read as if the database were empty; the line names it and how to open it."""
    db = tmp_path / "s.db"
    left = stored_demo_session(db, "running")
    code = main(["dashboard", "--latest", "--db", str(db), "--report", str(tmp_path / "r.pdf")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert f"no session in {db} has an answer yet (--latest passes over session {left}" in err
    assert f"open it with `lensopt dashboard {left}`" in err


def test_both_eyes_with_a_duel_protocol_is_one_line(tmp_path, capsys):
    result = run_in_process(capsys, "--protocol", DUEL, "--participant", "a", "--eye", "OU", "--db", tmp_path / "s.db")
    assert_one_line_error(result, "session.eye 'OU'", "letter sessions only", "run OD and OS as two sessions")
    assert not (tmp_path / "s.db").exists() or SessionStore(tmp_path / "s.db", readonly=True).sessions() == []


def test_an_eye_that_is_not_od_os_or_ou_is_one_line(tmp_path):
    result = lensopt_run("--protocol", DEMO, "--participant", "a", "--eye", "right", "--db", tmp_path / "s.db")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "--eye" in result.stderr and "'right'" in result.stderr


def test_a_lens_axis_outside_1_to_180_or_with_a_start_is_one_line(tmp_path, capsys):
    db = tmp_path / "s.db"
    refraction = REPO / "protocols" / "clinical-refraction.toml"
    result = run_in_process(capsys, "--protocol", refraction, "--participant", "a", "--axis", "0", "--db", db)
    assert_one_line_error(result, "--axis 0 is outside 1-180 degrees", "give e.g. 180 (not 0)")
    prescription = REPO / "protocols" / "clinical-prescription.toml"
    start = ("--start", "-1.00 / -0.50 x 180")
    result = run_in_process(
        capsys, "--protocol", prescription, "--participant", "a", *start, "--axis", "90", "--db", db
    )
    assert_one_line_error(result, "the full prescription (--start) searches the axis itself", "leave --axis out")
    assert no_session_created(db)


def test_a_resume_given_a_start_and_an_axis_is_not_told_to_leave_out_the_axis_it_ignores():
    """A resume ignores --start and --axis (each said so when it runs): refusing the pair as a new
    session's conflict told the clinician to leave --axis out of a command where neither counts."""
    request = RunRequest(db_path=Path("s.db"), resume=3, start="plano", axis_deg=90.0)
    assert (request.start, request.axis_deg) == ("plano", 90.0)


def test_a_compact_start_beginning_with_a_minus_is_read_as_the_start():
    """``--start -1.00/-0.50x180`` and ``--start -2.00DS`` (no space, a leading minus): argparse alone
    takes them for options ("expected one argument"); lensopt reads them as the start."""
    from lensopt.cli import attach_notation_values, build_parser

    for text in ("-1.00/-0.50x180", "-2.00DS", "-1.00 / -0.50 x 180", "+0.50/-0.25x090"):
        argv = attach_notation_values(["run", "--protocol", "clinical-prescription", "--start", text, "--eye", "OD"])
        args = build_parser().parse_args(argv)
        assert args.start == text and args.eye == "OD"
    assert attach_notation_values(["run", "--start", "--eye", "OD"]) == ["run", "--start", "--eye", "OD"]
    assert attach_notation_values(["run", "--start"]) == ["run", "--start"]


def test_the_last_line_names_the_eye_its_stopping_rule_stopped(monkeypatch, capsys):
    """In a session of both eyes the stop reported is the last eye searched's: the line names it
    (the other eye may have run to its budget)."""
    from lensopt.cli import main
    from lensopt.cli.handlers import run as handler
    from lensopt.experiment.session import SessionOutcome
    from lensopt.store import ResultRecord

    def outcome(*eyes):
        results = tuple(ResultRecord("-1.25 DS", -1.25, 0.0, None, 0.0, 0.96, 84, eye=eye) for eye in eyes)
        return SessionOutcome(3, "finished", 184, 84, 0.96, results[0] if results else None, results)

    for eyes, said in ((("OD", "OS"), "(OS stopped"), ((None,), "(stopped"), ((), "(stopped")):
        done = outcome(*eyes)
        monkeypatch.setattr(handler, "run_session", lambda request, log, warn, o=done: o)
        assert main(["run", "--resume", "3"]) == 0
        line = capsys.readouterr().out.strip()
        assert (
            line == f"session 3: finished {said} by its stopping rule at 84 trials, confidence 0.96), 184 trials stored"
        )


@pytest.mark.parametrize("typed, eye", [("od", "OD"), ("Os", "OS"), ("ou", "OU"), ("OD", "OD")])
def test_the_eye_is_taken_in_any_case(typed, eye):
    args = build_parser().parse_args(["run", "--protocol", "p.toml", "--participant", "x", "--eye", typed])
    assert args.eye == eye


def test_a_start_with_decimal_commas_is_one_line_saying_to_use_a_decimal_point(tmp_path, capsys):
    db = tmp_path / "s.db"
    result = run_in_process(
        capsys, "--protocol", "clinical-prescription", "--participant", "a", "--eye", "od", "--db", db,
        "--start", "-2,25 -0,75 x 180",
    )  # fmt: skip
    assert_one_line_error(result, "--start", "use a decimal point: -2.25 -0.75 x 180")
    assert no_session_created(db)


def test_a_participant_typed_in_another_encoding_than_utf8_is_said_so(tmp_path):
    """Found by a user audit: a Latin-1 byte (a Latin-1 terminal's "Zoë") was refused as "must be one
    line of printable text (no tab or newline)", which it is."""
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"lensopt", b"run", b"--protocol", str(DEMO).encode()]
        + [b"--participant", b"Zo\xeb", b"--db", str(tmp_path / "s.db").encode()],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_one_line_error(done, "--participant is not UTF-8 text (a byte of another encoding, e.g. Latin-1)")
    assert not (tmp_path / "s.db").exists()
