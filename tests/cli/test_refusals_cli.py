"""Command-line input that is refused in one line naming the problem and the fix, exit 2, no
traceback, nothing written over (the session database above all)."""

import json
import sqlite3
import types

import pytest
from one_line import refused

import lensopt.cli.handlers.calibrate as calibrate_handler
import lensopt.cli.handlers.hyperparameters as fits
from lensopt.cli import build_parser, main
from lensopt.store import SessionStore, TrialRecord


@pytest.fixture
def db(tmp_path):
    """A session database holding one session of 3 trials (WAL: its -wal beside it while open)."""
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        sid = store.create_session("P001", {"rule": "ucb-ald"}, {"screen_width_cm": 50.0}, {"rule": "ucb-ald"}, 3)
        for i in range(1, 4):
            store.append_trial(
                sid, TrialRecord(i, 0.25 * i, -0.5, 0.3, "K", "K", True, 0.9, 1.7e9 + i, 1.7e9 + i + 0.9, {})
            )
        store.set_status(sid, "finished")
    return path


def _three_trials(path) -> bool:
    with SessionStore(path, readonly=True) as store:
        return len(store.trials(1)) == 3


# ------------------------------------------------------------------ 1. hyperparameters --output


@pytest.mark.parametrize("space", ["sphere-cylinder", "power-vector"])
@pytest.mark.parametrize("target", ["{db}", "{db}-wal", "{link}"])
def test_hyperparameters_output_onto_the_session_database_is_refused_and_the_database_kept(
    capsys, monkeypatch, no_fit, db, tmp_path, space, target
):
    link = tmp_path / "fit.json"
    link.symlink_to(db)
    (tmp_path / "sessions.db-wal").write_bytes(b"\x37\x7f\x06\x82wal frames")
    monkeypatch.setenv("LENSOPT_DB", str(db))
    before = db.read_bytes()
    line = refused(capsys, ["hyperparameters", "--space", space, "--output", target.format(db=db, link=link)])
    assert "is the session database" in line and "choose another file name" in line
    assert db.read_bytes() == before and _three_trials(db)


@pytest.mark.parametrize("space", ["sphere-cylinder", "power-vector"])
def test_hyperparameters_output_onto_another_sqlite_database_is_refused_naming_it(
    capsys, monkeypatch, no_fit, db, tmp_path, space
):
    """Not the default database (LENSOPT_DB elsewhere): still a database, never written over."""
    monkeypatch.setenv("LENSOPT_DB", str(tmp_path / "other.db"))
    before = db.read_bytes()
    line = refused(capsys, ["hyperparameters", "--space", space, "--output", str(db)])
    assert line == (
        f"lensopt hyperparameters: error: --output {db} is an SQLite database (a session database?), not a "
        "hyperparameters JSON file; the fit would replace it; choose another file name (a .json file of its own)"
    )
    assert db.read_bytes() == before


@pytest.mark.parametrize("content", [b"\xf6\x00binary", b"not json at all", b"[1, 2]"])
def test_power_vector_output_that_is_not_a_json_object_names_the_file_not_a_codec(capsys, no_fit, tmp_path, content):
    out = tmp_path / "fit.json"
    out.write_bytes(content)
    line = refused(capsys, ["hyperparameters", "--space", "power-vector", "--output", str(out)])
    assert f"--output {out} is not a hyperparameters JSON file" in line and "codec" not in line
    assert out.read_bytes() == content


def test_hyperparameters_passes_with_the_random_design_is_refused(capsys, no_fit, tmp_path):
    line = refused(
        capsys, ["hyperparameters", "--design", "random", "--passes", "3", "--output", str(tmp_path / "h.json")]
    )
    assert "--passes applies to --design sessions only" in line


@pytest.mark.parametrize("option", ["--patients", "--responses", "--passes", "--restarts"])
def test_hyperparameters_counts_are_capped_as_the_benchmarks(capsys, no_fit, option):
    line = refused(capsys, ["hyperparameters", option, "10001"])
    assert f"argument {option}: must be at most 10000, got 10001" in line


def test_an_interrupted_fit_does_not_claim_anything_was_saved(capsys, monkeypatch, tmp_path):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fits, "fit_reference_hyperparameters", interrupted)
    assert main(["hyperparameters", "--output", str(tmp_path / "h.json")]) == 130
    err = capsys.readouterr().err
    assert "lensopt hyperparameters: interrupted; nothing was written" in err and "saved" not in err
    assert not (tmp_path / "h.json").exists()


# ------------------------------------------------------------------ 2. the box within a phoropter


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--m-half-width", "100", "must be at most 10 D (as a protocol's [start] m_half_width_d), got 100"),
        ("--j-half-width", "6", "must be at most 5 D (as a protocol's [start] j_half_width_d), got 6"),
        ("--accommodation", "100", "must be at most 20 D (as a protocol's [simulated] accommodation_d), got 100"),
    ],
)
def test_simulate_takes_the_protocols_limits_of_the_box_and_accommodation(capsys, option, value, message):
    line = refused(capsys, ["simulate", "--trials", "2", "--start", "auto", option, value])
    assert f"argument {option}: {message}" in line


@pytest.mark.parametrize(
    "extra, fix",
    [
        (["--m-half-width", "10"], "narrow --j-half-width and --m-half-width"),
        ([], "narrow --j-half-width and --m-half-width"),
    ],
)
def test_simulate_refuses_a_box_reaching_past_the_phoropter(capsys, extra, fix):
    line = refused(
        capsys,
        ["simulate", "--trials", "2", "--start", "-19.00 DS", "--true-sphere", "-19", "--true-cylinder", "0", *extra],
    )
    assert "the search box around --start -19.00 DS" in line and "beyond a phoropter's ±20 D" in line and fix in line


def test_simulate_names_the_widest_m_half_width_that_fits(capsys):
    line = refused(
        capsys, ["simulate", "--trials", "2", "--start", "-17.00 DS", "--true-sphere", "-17", "--true-cylinder", "0"]
    )
    assert "reaches -20.41 D in a meridian" in line and "give --m-half-width 1.59 or less" in line


# ------------------------------------------------------------------ 3. axes in whole degrees


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--protocol", "clinical-refraction", "--participant", "p", "--axis", "90.5"],
        ["simulate", "--trials", "2", "--true-sphere", "-1", "--true-cylinder", "-1", "--true-axis", "90.5"],
    ],
)
def test_a_fractional_axis_is_refused_as_not_a_whole_number_of_degrees(capsys, argv):
    line = refused(capsys, argv)
    assert "90.5 is not a whole number of degrees: give one from 1 to 180, e.g. 90" in line


def test_an_axis_outside_1_to_180_is_said_to_be_outside_not_fractional(capsys):
    line = refused(capsys, ["simulate", "--trials", "2", "--start", "-1.00 / -0.50 x -90"])
    assert "axis -90 in '-1.00 / -0.50 x -90' is outside 1-180" in line and "whole number" not in line


# ------------------------------------------------------------------ 4. options that would be ignored


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--no-lookahead"], "--no-lookahead applies"),
        (["--response-ms", "50"], "--response-ms applies"),
        (["--no-lookahead", "--response-ms", "50"], "--no-lookahead and --response-ms apply"),
    ],
)
def test_decision_time_handler_options_without_handler_are_refused(capsys, extra, named):
    line = refused(capsys, ["bench", "decision-time", "--trials", "10", "--processes", "1", *extra])
    assert f"{named} with --handler only" in line and "add --handler" in line


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--report", "{tmp}/r.pdf", "--replay"], "--replay sets the dashboard's window, and --report opens none"),
        (["--report", "{tmp}/r.pdf", "--screen", "0"], "--screen sets the dashboard's window"),
        (["--report", "{tmp}/r.pdf", "--replay", "--screen", "3"], "--replay and --screen set the dashboard's"),
        (["--report", "{tmp}/r.pdf", "--geometry", "900x700+0+0"], "--geometry sets the dashboard's window"),
        (["--report", "{tmp}/r.pdf", "--no-activate"], "--no-activate sets the dashboard's window"),
        (["--report", "{tmp}/r.pdf", "--minimized"], "--minimized sets the dashboard's window"),
    ],
)
def test_dashboard_window_options_without_a_window_are_refused(capsys, db, tmp_path, extra, named):
    argv = ["dashboard", "1", "--db", str(db), *(part.format(tmp=tmp_path) for part in extra)]
    assert named in refused(capsys, argv)
    assert not (tmp_path / "r.pdf").exists() and not (tmp_path / "s.png").exists()


def test_export_to_a_json_file_without_format_writes_json(capsys, db, tmp_path):
    out = tmp_path / "out.JSON"
    assert main(["export", "1", "--db", str(db), "-o", str(out)]) == 0
    assert len(json.loads(out.read_text())["trials"]) == 3


@pytest.mark.parametrize("fmt, name", [("csv", "out.json"), ("psychopy", "out.json"), ("json", "out.csv")])
def test_export_format_contradicting_the_file_name_is_refused(capsys, db, tmp_path, fmt, name):
    line = refused(capsys, ["export", "1", "--db", str(db), "--format", fmt, "-o", str(tmp_path / name)])
    assert f"--format {fmt} contradicts -o" in line
    assert not (tmp_path / name).exists()


def test_export_of_ids_and_all_says_they_conflict(capsys, db):
    assert "give one of SESSION_IDs, --participant ID or --all, not several" in refused(
        capsys, ["export", "1", "--all", "--db", str(db)]
    )


# ------------------------------------------------------------------ 6. messages naming the problem


@pytest.mark.parametrize("value, expected", [("-1e1", -10.0), ("-1.5E+1", -15.0), ("-.5e1", -5.0)])
def test_a_negative_number_in_scientific_notation_is_a_value_not_an_option(value, expected):
    args = build_parser().parse_args(["simulate", "--true-sphere", value, "--sphere-bounds", value, "1"])
    assert args.true_sphere == expected and list(args.sphere_bounds) == [expected, 1.0]


def test_the_typeset_minus_sign_of_the_docs_is_read_as_a_minus():
    """The README and the records print "−1.25" (U+2212); pasted into an option it was "expected a number"."""
    args = build_parser().parse_args(["simulate", "--true-sphere", "\u22121.5", "--sphere-bounds", "\u22122", "1"])
    assert args.true_sphere == -1.5 and list(args.sphere_bounds) == [-2.0, 1.0]


@pytest.mark.parametrize(
    "argv, fix",
    [
        (
            ["simulate", "--true-sphere", "-1,5"],
            "got '-1,5': write a decimal point, -1.5",
        ),  # was "expected one argument"
        (["simulate", "--lapse", "0,02"], "got '0,02': write a decimal point, 0.02"),
    ],
)
def test_a_decimal_comma_is_told_to_be_a_decimal_point(capsys, argv, fix):
    line = refused(capsys, argv)
    assert f"argument {argv[1]}: expected a number, {fix}" in line


@pytest.mark.parametrize(
    "argv, command",
    [
        (["run", "--protcol", "x"], "lensopt run"),
        (["sessions", "--bogus"], "lensopt sessions"),
        (["simulate", "--trials", "2", "--bogus"], "lensopt simulate"),
        (["bench", "refraction", "--bogus"], "lensopt bench refraction"),
        (["bench", "--bogus"], "lensopt bench"),
        (["--bogus"], "lensopt"),
    ],
)
def test_a_misspelled_option_points_at_its_own_commands_help(capsys, argv, command):
    """`lensopt run --protcol x` pointed at `lensopt --help`, which does not list run's options."""
    line = refused(capsys, argv)
    assert line.startswith(f"{command}: error: unrecognized arguments: ")
    assert line.endswith(f"(see `{command} --help`)")


@pytest.mark.parametrize(
    "argv, expected",
    [
        (
            ["--bogus", "run", "--protcol", "x"],
            "lensopt run: error: unrecognized arguments: --protcol x (see `lensopt run --help`); "
            "lensopt: --bogus (see `lensopt --help`)",
        ),
        (
            ["bench", "--y", "report", "d", "--x"],
            "lensopt bench report: error: unrecognized arguments: --x (see `lensopt bench report --help`); "
            "lensopt bench: --y (see `lensopt bench --help`)",
        ),
        (["--z", "bench", "report", "d"], "lensopt: error: unrecognized arguments: --z (see `lensopt --help`)"),
    ],
)
def test_misspelled_options_before_and_after_a_command_are_each_named_with_their_own_help(capsys, argv, expected):
    """`lensopt --bogus run --protcol x` named both under `lensopt run`, whose help lists neither
    `--bogus` nor where it belongs."""
    assert refused(capsys, argv) == expected


@pytest.mark.parametrize(
    "argv, command",
    [
        (["run", "--seed", ""], "lensopt run"),
        (["sessions", "--db", " "], "lensopt sessions"),
        (["bench", "refraction", "--out="], "lensopt bench refraction"),
    ],
)
def test_an_empty_value_points_at_its_own_commands_help(capsys, argv, command):
    line = refused(capsys, argv)
    assert line.startswith(f"{command}: error: ") and "was given an empty value" in line
    assert line.endswith(f"(see `{command} --help`)")


def test_a_negative_infinity_is_refused_as_not_finite(capsys):
    line = refused(capsys, ["simulate", "--trials", "2", "--true-sphere", "-inf", "--true-cylinder", "0"])
    assert "argument --true-sphere: must be a finite number, got -inf" in line


@pytest.mark.parametrize("value, problem", [("nan", "is not a number"), ("5", "is outside the letter sizes")])
def test_reference_context_errors_name_the_option(capsys, value, problem):
    line = refused(capsys, ["simulate", "--trials", "2", "--reference-context", value])
    assert f"--reference-context {value} {problem}" in line and "reference_context[0]" not in line


@pytest.mark.parametrize(
    "text, problem", [("{}", "(no 'kernel' entry)"), ("[1, 2]", "(it holds a list, not a JSON object)")]
)
def test_a_hyperparameter_file_without_a_kernel_says_so_in_words(capsys, tmp_path, text, problem):
    path = tmp_path / "k.json"
    path.write_text(text)
    line = refused(capsys, ["simulate", "--trials", "2", "--hyperparameters", str(path)])
    assert f"cannot read hyperparameters from {path} {problem}" in line
    assert "list indices" not in line and "('kernel')" not in line


@pytest.mark.parametrize(
    "command",
    [
        ["sessions"],
        ["export", "1"],
        ["print", "1", "--out", "{tmp}/r.pdf"],
        ["dashboard", "1"],
        ["run", "--protocol", "demo-simulated", "--participant", "P1"],
        ["run", "--resume", "1"],
    ],
)
def test_a_database_that_is_a_folder_is_said_to_be_a_folder(capsys, tmp_path, command):
    folder = tmp_path / "adir"
    folder.mkdir()
    line = refused(capsys, [part.format(tmp=tmp_path) for part in command] + ["--db", str(folder)])
    assert f"--db {folder} is a folder, not a session database file" in line
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [
        ["sessions"],
        ["print", "1", "--out", "{tmp}/r.pdf"],
        ["run", "--protocol", "demo-simulated", "--participant", "P1"],
    ],
)
def test_a_database_named_with_a_final_slash_is_a_folder_and_no_file_is_made(capsys, tmp_path, monkeypatch, command):
    """Found by a user audit: LENSOPT_DB=/…/newfold/ made a database file named newfold."""
    named = f"{tmp_path / 'newfold'}/"
    monkeypatch.setenv("LENSOPT_DB", named)
    line = refused(capsys, [part.format(tmp=tmp_path) for part in command])
    assert "is a folder, not a session database file" in line
    assert not (tmp_path / "newfold").exists()
    monkeypatch.delenv("LENSOPT_DB")
    assert "is a folder, not a session database file" in refused(capsys, ["sessions", "--db", named])


@pytest.mark.parametrize(
    "command",
    [["sessions"], ["export", "1", "-o", "{tmp}/z.csv"], ["print", "1", "--out", "{tmp}/r.pdf"], ["dashboard", "1"]],
)
def test_a_database_that_is_a_loop_of_links_is_one_line(capsys, tmp_path, command):
    """Found by a user audit: `export`, `print` and `dashboard` gave a traceback (RuntimeError: Symlink loop)."""
    (tmp_path / "loopA").symlink_to(tmp_path / "loopB")
    (tmp_path / "loopB").symlink_to(tmp_path / "loopA")
    line = refused(capsys, [part.format(tmp=tmp_path) for part in command] + ["--db", str(tmp_path / "loopA")])
    assert "is a loop of symbolic links" in line


def test_an_export_to_a_loop_of_links_is_one_line(capsys, tmp_path, db):
    (tmp_path / "loopA").symlink_to(tmp_path / "loopB")
    (tmp_path / "loopB").symlink_to(tmp_path / "loopA")
    line = refused(capsys, ["export", "1", "-o", str(tmp_path / "loopA"), "--db", str(db)])
    assert f"--output {tmp_path / 'loopA'} is a loop of symbolic links" in line


@pytest.mark.parametrize(
    ("argv", "option"), [(["sessions", "--db", "-dash/x.db"], "--db"), (["export", "1", "-o", "-x.csv"], "--output")]
)
def test_a_value_beginning_with_a_dash_is_told_how_to_write_it(capsys, argv, option):
    """Found by a user audit: argparse's "expected one argument" said nothing of --db=VALUE."""
    line = refused(capsys, argv)
    assert f"expected one argument; a value that begins with '-' is written {option}=VALUE" in line


def test_bench_report_of_a_file_says_it_is_no_campaign_folder(capsys, tmp_path):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"garbage")
    line = refused(capsys, ["bench", "report", str(garbage)])
    assert f"{garbage} is a file, not a campaign folder" in line
    assert garbage.read_bytes() == b"garbage"


@pytest.mark.parametrize(
    "command",
    [
        ["print", "1", "--out", "{tmp}/adir.pdf/"],
        ["dashboard", "1", "--report", "{tmp}/adir.pdf/"],
        ["hyperparameters", "--output", "{tmp}/adir.json/"],
    ],
)
def test_an_output_file_ending_in_a_slash_is_refused(capsys, db, tmp_path, command):
    argv = [part.format(tmp=tmp_path) for part in command]
    argv += [] if argv[0] == "hyperparameters" else ["--db", str(db)]
    assert "ends in a slash, which names a folder" in refused(capsys, argv)
    assert not (tmp_path / "adir.pdf").exists() and not (tmp_path / "adir.json").exists()


@pytest.mark.parametrize("bar_cm", ["0.001", "5000"])
def test_calibrate_names_the_bar_length_that_makes_an_impossible_screen(capsys, monkeypatch, tmp_path, bar_cm):
    """The width is derived from --bar-cm: the error names --bar-cm, not the derived field."""
    window = types.SimpleNamespace(size=(1920, 1080), close=lambda: None)
    monkeypatch.setattr(calibrate_handler, "show_bar", lambda screen, bar_px: window)
    monkeypatch.setattr(calibrate_handler, "save_monitor", lambda *a: pytest.fail("saved an impossible screen"))
    line = refused(capsys, ["calibrate", "--bar-cm", bar_cm, "--distance-cm", "300", "--name", "tiny"])
    assert line.startswith(f"lensopt calibrate: error: --bar-cm {bar_cm} cm for the 800 px bar makes the screen")
    assert "screen_width_cm" not in line


def test_the_fixture_database_the_refusals_are_tried_on_holds_answered_trials(db):
    """The fixture's database is a real one (a guard for the tests above)."""
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from trials").fetchone()[0] == 3
