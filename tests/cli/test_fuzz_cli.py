"""Property-based fuzz of bad input (issue 19), with Hypothesis.

(a) A bad value for every numeric option of every subcommand (found by walking the parser:
negative, zero, NaN, infinite, huge, fractional, non-numeric, empty), an unknown choice for every
option with choices, and bad paths: ``lensopt`` refuses each with exit 2, one stderr line naming
the option, no traceback, nothing created. (b) Malformed protocols (a table or field missing, a
field of the wrong type, out of range, an unknown key or table, non-UTF-8 bytes) are one-line
``ProtocolError``s from :func:`load_protocol` and from ``lensopt run`` without a display. (c) A
database with stored trials is byte-for-byte unchanged after every bad call that names it.

The default profile is quick (the suite's); ``HYPOTHESIS_PROFILE=nightly`` (``tests/conftest.py``)
runs many more examples. Calls are in-process (``lensopt.cli.main``) with stdout and stderr captured.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import math
import os
import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from letter_answers import store_letter_answers

from lensopt.cli import arguments, build_parser, main
from lensopt.errors import LensoptError
from lensopt.experiment.protocol import SECTIONS, load_protocol
from lensopt.reference_data import PROTOCOLS_DIR

#: Hypothesis settings of every property here: fixtures are per test, not per example (they are
#: read-only folders and a database the calls must leave alone).
FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])

DEMO_PROTOCOL = PROTOCOLS_DIR / "demo-simulated.toml"


def run_cli(argv) -> tuple[int, str, str]:
    """``lensopt ARGV`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse's refusals
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def assert_refused(argv, *, names: str | None = None) -> str:
    """Exit 2, exactly one stderr line (naming ``names`` if given), no traceback; the line."""
    code, _, err = run_cli(argv)
    lines = err.strip().splitlines()
    assert code == 2, (argv, code, err)
    assert len(lines) == 1, (argv, err)
    assert "Traceback" not in err, (argv, err)
    if names is not None:
        assert names in lines[0], (argv, lines[0])
    return lines[0]


@contextlib.contextmanager
def no_display():
    """As ``env -u DISPLAY``: no X or Wayland display for the duration."""
    saved = {k: os.environ.pop(k) for k in ("DISPLAY", "WAYLAND_DISPLAY") if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- (a) malformed command-line values --------------------------------------------------------

#: A valid, quick invocation of each command (the fuzzed option is appended, so it wins over any
#: value here): a refusal then comes from the bad value, not from a missing argument. Outputs go to
#: ``{tmp}``; bench campaigns run in this process, one tiny run.
BASE_ARGV = {
    ("simulate",): ["simulate", "--json", "--trials", "2"],
    ("run",): ["run", "--protocol", str(DEMO_PROTOCOL), "--participant", "F", "--db", "{tmp}/run.db"],
    ("calibrate",): ["calibrate", "--name", "fuzz", "--bar-cm", "20", "--distance-cm", "300"],
    ("sessions",): ["sessions", "--db", "{tmp}/none.db"],
    ("export",): ["export", "1", "--db", "{tmp}/none.db"],
    ("dashboard",): ["dashboard", "1", "--db", "{tmp}/none.db"],
    ("print",): ["print", "1", "--db", "{tmp}/none.db", "--out", "{tmp}/rx.pdf"],
    ("hyperparameters",): ["hyperparameters", "--output", "{tmp}/fit.json", "--patients", "1", "--responses", "2"],
    ("bench", "report"): ["bench", "report", "{tmp}/no-campaign"],
    ("bench", "rescale"): ["bench", "rescale", "--out", "{tmp}/rescale.json", "--samples", "10"],
    ("bench", "decision-time"): ["bench", "decision-time", "--trials", "1", "--processes", "1"],
    ("bench", "cli-startup"): ["bench", "cli-startup", "--runs", "1"],
}
CAMPAIGN_OPTIONS = ["--local-sync", "--no-progress", "--out", "{tmp}/campaign"]


def _base_argv(path: tuple[str, ...], tmp: Path) -> list[str]:
    argv = BASE_ARGV.get(path)
    if argv is None:  # a bench campaign: one tiny local run
        argv = [*path, *CAMPAIGN_OPTIONS, "--seeds" if path[1] not in ("robustness", "prescription") else "--patients"]
        argv += ["1"]
    return [a.replace("{tmp}", str(tmp)) for a in argv]


def _walk(parser, path=()):
    """(command path, action) for every option of every (sub)command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))
        elif action.option_strings and action.option_strings[0] != "-h":
            yield path, action


def _kind(action) -> str | None:
    """What a numeric option takes: 'count' (whole, ≥ 0 or ≥ 1), 'whole' (any whole number),
    'positive' / 'non-negative' / 'rate' (numbers), 'signed' (any finite number); None if not numeric."""
    kind = action.type
    if kind in (
        arguments.positive_int,
        arguments.non_negative_int,
        arguments.bench_count,
        arguments.check_letters,
        arguments.screen_number,
    ):
        return "count"
    if kind is int:
        return "whole"
    if kind in (arguments.positive_float, arguments.non_negative_float):
        return "positive"
    if kind in (arguments.finite_float, arguments.whole_axis):
        return "signed"
    if kind is arguments.processes:
        return "count"
    if kind is arguments.confidence:
        return "rate"
    name = getattr(kind, "__name__", "")
    if name in ("_trials", "_alternatives", "_processes", "_at_least_two", "_restarts"):
        return "count"
    if name.startswith("_at_most_"):  # a positive or non-negative number with an upper limit
        return "positive"
    if name in ("_rate", "_confidence"):
        return "rate"
    return None


OPTIONS = sorted(
    ((path, action.option_strings[-1], _kind(action), action.nargs) for path, action in _walk(build_parser())),
    key=lambda o: (o[0], o[1]),
)
NUMERIC = [o for o in OPTIONS if o[2] is not None]
CHOICES = [
    (path, action.option_strings[-1], tuple(action.choices))
    for path, action in _walk(build_parser())
    if action.choices is not None
]

#: Text that is no number at all.
NOT_A_NUMBER = st.one_of(
    st.sampled_from(["", " ", "abc", "1,5", "1..2", "0x10", "--", "½", "1e", "one"]),
    st.text(min_size=1, max_size=8).filter(lambda t: not _parses(t) and not t.startswith("-")),
)
#: Larger than anything lensopt counts or measures (:data:`lensopt.cli.arguments.MAX_WHOLE_NUMBER`,
#: :data:`lensopt.cli.arguments.MAX_MAGNITUDE`).
HUGE_WHOLE = st.integers(min_value=arguments.MAX_WHOLE_NUMBER + 1, max_value=10**40).map(str)
HUGE_NUMBER = st.one_of(
    st.floats(min_value=arguments.MAX_MAGNITUDE * 10, max_value=1e308).map(repr),
    st.sampled_from(["1e400", "-1e400", "1e309"]),
)
NOT_FINITE = st.sampled_from(["nan", "NaN", "inf", "-inf", "Infinity", "-nan"])


def _parses(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def bad_values(kind: str):
    """Strategy of values an option of this kind must refuse."""
    common = [NOT_A_NUMBER, NOT_FINITE, HUGE_NUMBER]
    if kind in ("count", "whole"):
        fractional = st.floats(min_value=-1e6, max_value=1e6).filter(lambda v: v != int(v)).map(repr)
        return st.one_of(*common, HUGE_WHOLE, fractional, st.integers(max_value=-1).map(str))
    if kind == "positive":
        return st.one_of(*common, st.floats(max_value=-1e-9, min_value=-1e300).map(repr))
    if kind == "rate":
        return st.one_of(*common, st.floats(max_value=-1e-9, min_value=-1e300).map(repr), st.just("1.5"))
    return st.one_of(*common)  # signed: any finite number of sensible size is fine


#: Numeric options that a value the fuzz calls bad still passes: strict xfails, with the reason
#: (none now: lensopt run's --seed, --trials and --resume were the last, fixed).
UNOWNED_GAPS: dict[tuple[tuple[str, ...], str], str] = {}


def _xfail_if(reason: str | None, *values):
    """``values`` as one pytest parameter, a strict xfail when ``reason`` is given."""
    return pytest.param(*values, marks=pytest.mark.xfail(strict=True, reason=reason) if reason else ())


@pytest.mark.parametrize(
    "path, option, kind, nargs",
    [_xfail_if(UNOWNED_GAPS.get((p, o)), p, o, k, n) for p, o, k, n in NUMERIC],
    ids=[f"{' '.join(p)} {o}" for p, o, _, _ in NUMERIC],
)
@FUZZ
@given(data=st.data())
def test_a_bad_number_for_any_numeric_option_is_one_line_and_exit_2(tmp_path, path, option, kind, nargs, data):
    value = data.draw(bad_values(kind), label="value")
    before = snapshot(tmp_path)
    if nargs == 2:  # a pair (LO HI): the bad value first or second
        pair = [value, "1"] if data.draw(st.booleans(), label="bad first") else ["0", value]
        argv = [*_base_argv(path, tmp_path), option, *pair]
    else:  # OPTION=VALUE, so that a value starting with '-' is not read as an option
        argv = [*_base_argv(path, tmp_path), f"{option}={value}"]
    with no_display():
        line = assert_refused(argv)
    assert option in line, line
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("path, option, choices", CHOICES, ids=[f"{' '.join(p)} {o}" for p, o, _ in CHOICES])
@FUZZ
@given(data=st.data())
def test_an_unknown_choice_for_any_option_is_one_line_and_exit_2(tmp_path, path, option, choices, data):
    value = data.draw(st.text(min_size=0, max_size=12).filter(lambda t: t not in choices), label="value")
    before = snapshot(tmp_path)
    line = assert_refused([*_base_argv(path, tmp_path), f"{option}={value}"])
    said = "was given an empty value" if not value.strip() else "invalid choice"  # (lensopt.cli.empty_option)
    assert option in line and said in line, line
    assert snapshot(tmp_path) == before


def test_the_fuzz_reaches_every_subcommand():
    """Every command has at least one fuzzed option (numeric, choice or path)."""
    fuzzed = {p[:1] for p, *_ in NUMERIC} | {p[:1] for p, *_ in CHOICES} | {p[:1] for p, *_ in PATH_CASES}
    commands = {(name,) for name in build_parser()._subparsers._group_actions[0].choices}
    assert commands - fuzzed <= {("sessions",), ("export",), ("dashboard",)}  # their --db and ids: (c)
    assert len(NUMERIC) > 60 and len(CHOICES) > 10
    # a new value type is either numeric (and fuzzed above) or one of these: add it to _kind otherwise
    # (an option with choices is fuzzed by CHOICES, whatever its type normalises: --eye od is OD)
    others = {action.type for _, action in _walk(build_parser()) if _kind(action) is None and action.choices is None}
    # (a scheduler's address: tests/cli/test_bench_cli.py; a window's geometry: below)
    assert others <= {None, Path, arguments.scheduler_address, arguments.window_geometry}, others


@FUZZ
@given(value=st.text(max_size=24))
@example(value="900x720+1020+0")
@example(value="0x720+0+0")
@example(value="900x720-5+0")
@example(value="900x720+-1920+0")
@example(value="")
def test_a_bad_window_geometry_is_one_line_and_exit_2(tmp_path, value):
    """lensopt dashboard --geometry: any text that is not WIDTHxHEIGHT+LEFT+TOP, sizes of 1-16384 px and
    offsets within ±32768 px (negative on a screen left of the primary one), is refused in one line
    before the database is opened."""
    try:
        arguments.window_geometry(value)
    except argparse.ArgumentTypeError:
        before = snapshot(tmp_path)
        line = assert_refused([*_base_argv(("dashboard",), tmp_path), f"--geometry={value}"])
        said = "was given an empty value" if not value.strip() else "WIDTHxHEIGHT+LEFT+TOP"
        assert "--geometry" in line and (said in line or "offsets within" in line), line
        assert snapshot(tmp_path) == before
    else:  # well formed: the four numbers as written, sizes within range
        width, height, left, top = arguments.window_geometry(value)
        assert [int(n) for n in re.split(r"[x+]", value.strip())] == [width, height, left, top]
        assert 1 <= width <= arguments.MAX_WINDOW_PX and 1 <= height <= arguments.MAX_WINDOW_PX


# Bad paths: each (command, option, what is wrong) once. A path that must exist is given as one that
# does not, as a folder, or in /proc; an output as a file in a missing folder, in /proc (root may
# pass os.access there), or under a file.
MISSING, IN_PROC, UNDER_A_FILE, A_FOLDER = "missing", "proc", "under-a-file", "a-folder"


def _bad_path(kind: str, tmp: Path, name: str) -> str:
    return {
        MISSING: f"{tmp}/missing/{name}",
        IN_PROC: f"/proc/lensopt-fuzz-{name}",
        UNDER_A_FILE: f"{tmp}/a-file/{name}",
        A_FOLDER: f"{tmp}/a-folder",
    }[kind]


OUTPUT_KINDS = (MISSING, IN_PROC, UNDER_A_FILE)
PATH_CASES = (
    [(("simulate",), "--hyperparameters", kind, "k.json") for kind in (MISSING, A_FOLDER, IN_PROC)]
    + [(("hyperparameters",), "--output", kind, "fit.json") for kind in (*OUTPUT_KINDS, A_FOLDER)]
    + [(("bench", "rescale"), "--out", kind, "rescale.json") for kind in (*OUTPUT_KINDS, A_FOLDER)]
    + [(("bench", "functions"), "--out", kind, "campaign") for kind in (IN_PROC, UNDER_A_FILE)]
    + [(("bench", "prescription"), "--out", kind, "campaign") for kind in (IN_PROC, UNDER_A_FILE)]
    + [(("bench", "report"), "--out", kind, "report") for kind in (IN_PROC, UNDER_A_FILE)]
    + [(("run",), "--protocol", kind, "p.toml") for kind in (MISSING, A_FOLDER)]
    + [(("print",), "--out", kind, "rx.pdf") for kind in (*OUTPUT_KINDS, A_FOLDER)]
)


#: Bad paths not refused as they should be: strict xfails, with the reason (none now: lensopt run
#: created a new --db before it read a missing protocol, fixed).
PATH_GAPS: dict = {}


@pytest.mark.parametrize(
    "path, option, kind, name",
    [_xfail_if(PATH_GAPS.get((p, o, k)), p, o, k, n) for p, o, k, n in PATH_CASES],
    ids=[f"{' '.join(p)} {o} {k}" for p, o, k, _ in PATH_CASES],
)
def test_a_bad_path_is_one_line_and_creates_nothing(tmp_path, path, option, kind, name):
    (tmp_path / "a-file").write_text("a file, not a folder")
    (tmp_path / "a-folder").mkdir()
    if path == ("bench", "report"):  # a campaign to report on
        (tmp_path / "campaign" / "runs").mkdir(parents=True)
        base = ["bench", "report", str(tmp_path / "campaign")]
    else:
        base = _base_argv(path, tmp_path)
    before = snapshot(tmp_path)
    bad = _bad_path(kind, tmp_path, name)
    with no_display():
        assert_refused([*base, option, bad])
    assert snapshot(tmp_path) == before
    assert not (tmp_path / "missing").exists() and not Path(f"/proc/lensopt-fuzz-{name}").exists()


# --- (b) malformed protocols ------------------------------------------------------------------

VALID = tomllib.loads(DEMO_PROTOCOL.read_text())


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def to_toml(data: dict) -> str:
    """A protocol dict (tables of values) as TOML text."""
    lines = []
    for table, fields in data.items():
        if not isinstance(fields, dict):
            lines.insert(0, f"{table} = {_toml_value(fields)}")
            continue
        lines.append(f"[{table}]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in fields.items()]
    return "\n".join(lines) + "\n"


def _annotation(table: str, field: str) -> str:
    for f in dataclasses.fields(SECTIONS[table]):
        if f.name == field:
            return str(f.type)
    raise KeyError(field)


FIELDS = [(t, f) for t, fields in VALID.items() for f in fields]
REQUIRED = [
    (t, f.name)
    for t in VALID
    for f in dataclasses.fields(SECTIONS[t])
    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
]


@st.composite
def malformed_protocols(draw) -> tuple[bytes, str]:
    """(the file's bytes, what is wrong with it): one defect in the demo protocol."""
    data = {t: dict(fields) for t, fields in VALID.items()}
    defect = draw(st.sampled_from(["missing", "mistyped", "out-of-range", "unknown-key", "unknown-table", "bytes"]))
    name = st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True)
    if defect == "missing":
        table, field = draw(st.sampled_from(REQUIRED))
        del data[table][field]
        what = f"{table}.{field} missing"
    elif defect == "mistyped":
        table, field = draw(st.sampled_from(FIELDS))
        annotation = _annotation(table, field)
        if "str" in annotation and "float" not in annotation and "int" not in annotation:
            wrong = draw(st.sampled_from([{"x": 1}, [1, 2], 3.5, True]))
        elif "bool" in annotation:
            wrong = draw(st.sampled_from(["yes", {"x": 1}, [1], 2.5]))
        else:  # numbers, and tuples of numbers
            wrong = draw(st.sampled_from(["abc", "", {"x": 1}, [[1]], True]))
        data[table][field] = wrong
        what = f"{table}.{field} = {wrong!r}"
    elif defect == "out-of-range":
        table, field = draw(
            st.sampled_from(
                [
                    (t, f)
                    for t, f in FIELDS
                    if isinstance(VALID[t][f], (int, float)) and not isinstance(VALID[t][f], bool)
                ]
            )
        )
        wrong = draw(st.sampled_from([math.nan, math.inf, -math.inf, -1e300, 1e300, -(10**18), 10**18]))
        data[table][field] = wrong
        what = f"{table}.{field} = {wrong!r}"
    elif defect == "unknown-key":
        table = draw(st.sampled_from(sorted(VALID)))
        key = draw(name.filter(lambda k: k not in {f.name for f in dataclasses.fields(SECTIONS[table])}))
        data[table][key] = 1
        what = f"unknown key {table}.{key}"
    elif defect == "unknown-table":
        table = draw(name.filter(lambda k: k not in SECTIONS))
        data[table] = {"x": 1}
        what = f"unknown table [{table}]"
    if defect == "bytes":
        text = to_toml(data).encode()
        at = draw(st.integers(min_value=0, max_value=len(text)))
        junk = draw(st.sampled_from([b"\xff", b"\xfe\xfe", b"\xc3\x28", b"\x80abc", b"\xed\xa0\x80"]))
        return text[:at] + junk + text[at:], f"non-UTF-8 {junk!r} at byte {at}"
    return to_toml(data).encode(), what


#: Protocol defects the parser accepts, left out of the property (none now: ``[protocol]
#: description`` took any TOML value, fixed; the test below keeps it refused).
PROTOCOL_GAPS: dict[tuple[str, str], str] = {}


def _known_gap(what: str) -> bool:
    return any(what.startswith(f"{t}.{f} ") for t, f in PROTOCOL_GAPS)


@FUZZ
@given(case=malformed_protocols())
def test_a_malformed_protocol_is_a_one_line_protocol_error(tmp_path, case):
    content, what = case
    if _known_gap(what):
        return
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    with pytest.raises(LensoptError) as caught:
        load_protocol(path)
    message = str(caught.value)
    assert message.strip() and len(message.strip().splitlines()) == 1, (what, message)
    assert str(path) in message, (what, message)


@pytest.mark.parametrize("table, field", [("protocol", "description")])
@pytest.mark.parametrize("wrong", [{"x": 1}, [1, 2], 3.5, True], ids=["table", "list", "number", "bool"])
def test_a_protocol_text_field_of_another_type_is_refused(tmp_path, table, field, wrong):
    data = {t: dict(fields) for t, fields in VALID.items()}
    data[table][field] = wrong
    path = tmp_path / "bad.toml"
    path.write_text(to_toml(data))
    with pytest.raises(LensoptError, match=rf"{table}\.{field} must be text, got "):
        load_protocol(path)


@pytest.fixture
def stored_db(tmp_path_factory) -> Path:
    """A database with one finished letter session of 6 stored trials (through the store API)."""
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.simulation import make_patient
    from lensopt.store import SessionStore

    path = tmp_path_factory.mktemp("db") / "sessions.db"
    optimizer = RefractionOptimizer(rule="ucb-ald", seed=3)
    patient = make_patient(3)
    with SessionStore(path) as store:
        sid = store.create_session("P-fuzz", {}, {}, optimizer.settings_dict(), 3)
        store_letter_answers(store, sid, optimizer, patient, 6)
        store.set_status(sid, "finished")
    return path


@FUZZ
@given(case=malformed_protocols())
def test_lensopt_run_without_a_display_refuses_a_malformed_protocol_first_and_leaves_the_database(
    tmp_path, stored_db, case
):
    content, what = case
    if _known_gap(what):
        return
    protocol = tmp_path / "bad.toml"
    protocol.write_bytes(content)
    before = stored_db.read_bytes()
    with no_display():
        line = assert_refused(["run", "--protocol", protocol, "--participant", "X", "--db", stored_db])
    assert str(protocol) in line and "no display" not in line, (what, line)
    assert stored_db.read_bytes() == before


# --- (c) the stored database is left alone -------------------------------------------------------

#: Bad calls that name the stored database, each with the reason it is a strict xfail when it is
#: not refused as it should be, in files this suite does not own (store, experiment, lensopt
#: run/sessions/export/print/dashboard).
BAD_CALLS_ON_THE_DATABASE = [
    (["sessions", "--db", "{db}", "--bogus"], None),
    (["sessions", "--db", "{db}", "--json", "extra"], None),
    (["export", "999", "--db", "{db}"], None),
    (["export", "0", "--db", "{db}"], None),
    (["export", "-1", "--db", "{db}"], None),
    (["export", "abc", "--db", "{db}"], None),
    (["export", "1", "--db", "{db}", "--format", "xml"], None),
    (["print", "999", "--db", "{db}", "--out", "{tmp}/rx.pdf"], None),
    (["print", "1", "--db", "{db}", "--out", "{tmp}/rx.txt"], None),
    (["print", "1", "--db", "{db}", "--out", "/proc/lensopt-fuzz.pdf"], None),
    (["dashboard", "999", "--db", "{db}", "--report", "{tmp}/r.pdf"], None),
    (["export", str(2**63), "--db", "{db}"], None),
    (["print", str(2**63), "--db", "{db}", "--out", "{tmp}/rx.pdf"], None),
    (["dashboard", str(2**63), "--db", "{db}", "--report", "{tmp}/r.pdf"], None),
    (["run", "--resume", str(2**63), "--db", "{db}"], None),
    (["run", "--resume", "999", "--db", "{db}"], None),
    (["run", "--resume", "1", "--db", "{db}"], None),
    (["run", "--resume", "1", "--db", "{db}", "--trials", "-5"], None),
    (["run", "--protocol", "{tmp}/missing.toml", "--participant", "X", "--db", "{db}"], None),
    (["run", "--protocol", str(DEMO_PROTOCOL), "--db", "{db}"], None),
    (["run", "--protocol", str(DEMO_PROTOCOL), "--participant", "X", "--db", "{db}", "--eye", "OX"], None),
    (["run", "--protocol", str(DEMO_PROTOCOL), "--participant", "X", "--db", "{db}", "--start", "abc"], None),
    (["run", "--protocol", str(DEMO_PROTOCOL), "--participant", "X", "--db", "{db}", "--save-frames", "/proc/f"], None),
]


@pytest.mark.parametrize(
    "call",
    [_xfail_if(reason, call) for call, reason in BAD_CALLS_ON_THE_DATABASE],
    ids=[" ".join(call[:2]) + f" #{i}" for i, (call, _) in enumerate(BAD_CALLS_ON_THE_DATABASE)],
)
def test_a_bad_call_naming_the_database_leaves_it_byte_for_byte(tmp_path, stored_db, call):
    argv = [a.replace("{db}", str(stored_db)).replace("{tmp}", str(tmp_path)) for a in call]
    before, files = stored_db.read_bytes(), snapshot(tmp_path)
    with no_display():
        assert_refused(argv)
    assert stored_db.read_bytes() == before
    assert snapshot(tmp_path) == files


@FUZZ
@given(data=st.data())
def test_any_bad_number_on_a_command_naming_the_database_leaves_it(stored_db, tmp_path, data):
    command = data.draw(st.sampled_from(["export", "print", "dashboard"]), label="command")
    session = data.draw(
        st.one_of(st.integers(min_value=2, max_value=2**63 - 1).map(str), st.sampled_from(["0", "-1", "x", "", "1.5"])),
        label="session",
    )
    argv = [command, session, "--db", stored_db]
    argv += ["--out", tmp_path / "rx.pdf"] if command == "print" else []
    argv += ["--report", tmp_path / "r.pdf"] if command == "dashboard" else []
    before = stored_db.read_bytes()
    with no_display():
        assert_refused(argv)
    assert stored_db.read_bytes() == before
    assert not (tmp_path / "rx.pdf").exists() and not (tmp_path / "r.pdf").exists()
