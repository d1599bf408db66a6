"""The psychopy-lensopt plugin (plugins/psychopy-lensopt): Builder's "lensopt refraction" loop, for real.

The plugin is installed from its own pyproject.toml into a temporary folder (pip, no download), found
by PsychoPy's plugin scan through its entry point and loaded; a .psyexp using the loop is written by
PsychoPy's Experiment, compiled by PsychoPy's compiler (psyexpCompile.compileScript), and the script
runs a simulated-observer session under Xvfb. Each step is a subprocess, as Builder's are, so the
plugin's registration does not leak into other tests.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lensopt.refraction.lens import diopter_text
from tests.conftest import dark_span_px

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "plugins" / "psychopy-lensopt"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("esprima") is None,
    reason="PsychoPy's Builder (psychopy.experiment) imports esprima, which psychopy-lib does not "
    "declare: pip install -e '.[builder]'",
)

#: The loop's Calibration field: a 53 cm, 1920 px wide screen seen from 6 m (the Coder example's);
#: in the test's 400 x 300 window it draws letters from logMAR -0.80 to +0.88 faithfully.
SCREEN = dict(screen_width_cm=53.0, screen_width_px=1920, screen_height_px=1080, distance_cm=600.0)
CALIBRATION = f"Calibration({', '.join(f'{key}={value!r}' for key, value in SCREEN.items())})"

MAKE_PSYEXP = textwrap.dedent(
    """
    import sys
    from psychopy import experiment, plugins
    from psychopy.experiment.components.code import CodeComponent
    from psychopy.experiment.components.text import TextComponent
    from psychopy.experiment.routines import Routine

    plugins.scanPlugins()
    assert plugins.loadPlugin("psychopy-lensopt"), "the plugin did not load"
    from psychopy.experiment.loops import LensoptRefractionLoop  # set there by the entry point

    exp = experiment.Experiment()
    settings = exp.settings.params
    settings["Show info dlg"].val = False
    settings["Full-screen window"].val = len(sys.argv) > 4 and sys.argv[4] == "full-screen"
    settings["Window size (pixels)"].val = "(400, 300)"
    settings["Save psydat file"].val = True  # Builder's default: the pickle is written before the CSV
    settings["Save log file"].val = False
    routine = Routine("letter", exp)
    exp.addRoutine("letter", routine)
    # docs/psychopy.md's recipe: lensopt's optotypes at the loop's letter_height_px; the second frame
    # of each letter is saved, to be measured
    code = CodeComponent(
        exp, "letter", name="letterCode", codeType="Py",
        beginExp="from lensopt.experiment.optotypes import LetterStim\\n"
                 "letter_stim = LetterStim(win)\\n"
                 "os.makedirs('frames', exist_ok=True)\\n"
                 "letters_shown = 0\\n",
        beginRoutine="letter_stim.set_letter('E', letter_height_px)\\n",
        eachFrame="letter_stim.draw()\\n"
                  "if frameN == 1:\\n"
                  "    win.getMovieFrame(buffer='back')\\n",
        endRoutine="letters_shown += 1\\n"
                   "win.saveMovieFrames(os.path.join('frames', 'trial%03d.png' % letters_shown))\\n",
    )
    routine.addComponent(code)
    # two frames long (a person's routine ends with a Keyboard component; a Code component alone
    # keeps no routine running)
    routine.addComponent(TextComponent(exp, "letter", name="blank", text="", stopType="duration (frames)",
                                       stopVal="2"))
    exp.flow.addRoutine(routine, 0)
    rule = sys.argv[2] if len(sys.argv) > 2 else "ucb-ald"
    calibration = sys.argv[3] if len(sys.argv) > 3 else CALIBRATION
    loop = LensoptRefractionLoop(exp, name="refraction", nTrials="20", seed="3", minTrials="15",
                                 calibration=calibration,
                                 checkLetters="3", simulatedPatient="-1.25, -0.75", rule=rule,
                                 nAlternatives="10" if rule == "acuity-law" else "26",
                                 accommodation=sys.argv[5] if len(sys.argv) > 5 else "")
    exp.flow.addLoop(loop, 0, 2)
    exp.saveToXML(sys.argv[1])
    """
).replace("CALIBRATION", repr(CALIBRATION))

COMPILE = textwrap.dedent(
    """
    import sys
    from psychopy import plugins
    plugins.activatePlugins()  # what Builder does at start-up; the compiler's command line does not
    from psychopy.scripts.psyexpCompile import compileScript
    compileScript(infile=sys.argv[1], outfile=sys.argv[2])
    """
)


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    """A folder holding the installed plugin (package and dist-info with its entry point)."""
    root = tmp_path_factory.mktemp("plugin")
    source = root / "source"
    shutil.copytree(PLUGIN, source)  # the build leaves build/ and egg-info beside the sources
    target = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--target", str(target), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target


def _run(args, cwd, plugin_path=None, timeout=300, succeeds=True):
    env = dict(os.environ)
    if plugin_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(plugin_path), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert (result.returncode == 0) == succeeds, result.stdout[-2000:] + result.stderr[-4000:]
    return result


def _script(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text)
    return str(path)


def test_the_installed_plugin_registers_the_loop_through_its_entry_point(plugin_path, tmp_path):
    check = """
    from psychopy import plugins
    plugins.scanPlugins()
    assert "psychopy-lensopt" in plugins.listPlugins("all"), plugins.listPlugins("all")
    assert plugins.loadPlugin("psychopy-lensopt")
    from psychopy.experiment.loops import getAllLoopTypes
    loop = getAllLoopTypes()["LensoptRefractionLoop"]
    print(loop.label, loop.plugin)
    """
    result = _run([_script(tmp_path, "check.py", textwrap.dedent(check))], tmp_path, plugin_path)
    assert "lensopt refraction psychopy-lensopt" in result.stdout


def _compile(
    folder: Path,
    plugin_path,
    rule: str = "ucb-ald",
    calibration: str = CALIBRATION,
    window: str = "window",
    accommodation: str = "",
) -> Path:
    make = _script(folder, "make.py", MAKE_PSYEXP)
    _run([make, "refraction.psyexp", rule, calibration, window, accommodation], folder, plugin_path)
    _run([_script(folder, "compile.py", COMPILE), "refraction.psyexp", "refraction.py"], folder, plugin_path)
    return folder


@pytest.fixture(scope="module")
def compiled(plugin_path, tmp_path_factory):
    return _compile(tmp_path_factory.mktemp("builder"), plugin_path)


def test_psychopys_compiler_writes_the_loop_with_lensopts_handler(compiled):
    assert 'loopType="LensoptRefractionLoop"' in (compiled / "refraction.psyexp").read_text()
    script = (compiled / "refraction.py").read_text(encoding="utf-8-sig")
    assert "refraction = RefractionHandler(" in script
    assert "stop=StopRule(confidence=0.95, min_trials=15, max_trials=20, check_letters=3)" in script
    assert "lookahead=True," in script  # "Decide ahead", on by default
    assert f"refractionCalibration = {CALIBRATION}" in script
    assert "letter_bounds_logmar=refractionLetterBounds," in script
    assert "refraction.addResponse(refractionPatient.respond(letter_logmar, sphere_d, cylinder_d))" in script
    compile(script, "refraction.py", "exec")


@pytest.fixture(scope="module")
def session(compiled, plugin_path):
    """The compiled script run once: its console output and the experiment's CSV."""
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs an X display (run under xvfb-run)")
    result = _run(["refraction.py"], compiled, plugin_path)
    (csv,) = (compiled / "data").glob("*.csv")
    return result, pd.read_csv(csv)


def test_the_compiled_script_runs_a_simulated_session_into_the_experiment_csv(session):
    result, frame = session
    trials = frame[frame["refraction.trial_index"].notna()]

    assert 15 <= len(trials) <= 20
    for column in ("trial_index", "letter_logmar", "sphere_d", "cylinder_d", "decision_ms", "response"):
        assert pd.api.types.is_numeric_dtype(frame[f"refraction.{column}"]), column
    assert trials["refraction.trial_index"].astype(int).tolist() == list(range(1, len(trials) + 1))
    assert {"participant", "date", "expName", "psychopyVersion", "frameRate"} <= set(frame.columns)
    # the loop's result: a row of its own after the trials, and one line on the console
    (result_row,) = frame[frame["refraction.best_sphere_d"].notna()].to_dict("records")
    assert result_row["refraction.n_trials"] == len(trials)
    # the loop's seed, rule and alternatives (the .psyexp's), beside its result in the data file
    assert (result_row["refraction.seed"], result_row["refraction.rule"]) == (3, "ucb-ald")
    assert result_row["refraction.n_alternatives"] == 26
    assert result_row["refraction.stop_reason"] in ("confidence", "max_trials") or not result_row["refraction.stopped"]
    # the line says the lens on the loop's lens step (0.25 D); the row has it beside the estimate
    lens = (result_row["refraction.lens_sphere_d"], result_row["refraction.lens_cylinder_d"])
    best = (result_row["refraction.best_sphere_d"], result_row["refraction.best_cylinder_d"])
    assert all(v / 0.25 == pytest.approx(round(v / 0.25)) for v in lens)
    assert all(abs(v - b) <= 0.125 + 1e-9 for v, b in zip(lens, best))
    said = f"lensopt: best lens S {diopter_text(lens[0])} D  C {diopter_text(lens[1])} D after"
    assert said in result.stdout and f"after {len(trials)} trials" in result.stdout
    # a GP letter search takes the clearest lens: the line and the row say it may not be the most plus
    note = result_row["refraction.most_plus_note"]
    assert note.startswith("may not be the most-plus lens") and "(clinical-prescription --start RX)" in note
    assert f"; {note}" in result.stdout


def test_with_a_calibration_the_loop_asks_only_letters_the_screen_draws_and_they_are_drawn_that_tall(session, compiled):
    """The loop's Calibration limits its letter sizes to those drawn faithfully in the 400 x 300
    window (strokes of a pixel or more, the letter within 0.8 of the window's height), and the
    routine's LetterStim at the loop's letter_height_px draws capitals that tall within a pixel in the
    saved frames. The loop's own bounds, (-1.0, 2.0) logMAR, ask letters 3 px tall, and 3160 px."""
    from lensopt.experiment.calibration import Calibration

    _, frame = session
    trials = frame[frame["refraction.trial_index"].notna()]
    calibration = Calibration(**SCREEN)
    low_logmar, high_logmar = calibration.renderable_logmar(300)
    letter_logmar = trials["refraction.letter_logmar"].to_numpy()
    expected_px = calibration.letter_height_px(letter_logmar)

    assert (low_logmar - 1e-9 <= letter_logmar).all() and (letter_logmar <= high_logmar + 1e-9).all()
    assert letter_logmar.max() - letter_logmar.min() > 0.5  # sizes across the range, not one
    assert np.allclose(trials["refraction.letter_height_px"], expected_px)
    measured = _letter_heights_px(compiled, len(trials))
    assert np.all(np.abs(np.array(measured) - expected_px) <= 1.0), measured


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (run under xvfb-run)")
def test_the_acuity_law_rule_builds_its_optimizer_and_a_simulated_patient_with_the_loops_alphabet(
    plugin_path, tmp_path
):
    folder = _compile(tmp_path, plugin_path, rule="acuity-law")
    script = (folder / "refraction.py").read_text(encoding="utf-8-sig")
    handler = script[script.index("refraction = RefractionHandler(") :]
    assert handler.split("(", 2)[1].split()[-1] == "AcuityLawOptimizer" and "rule=" not in handler[:300]
    assert "n_alternatives=10, seed=3)" in script  # the patient guesses among the loop's letters
    result = _run(["refraction.py"], folder, plugin_path)
    assert "lensopt: best lens S " in result.stdout
    assert (
        "push plus on the chart, or tell the model the eye may accommodate ([optimizer] accommodation_d"
        in result.stdout
    )


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (run under xvfb-run)")
def test_the_acuity_law_told_the_loops_amplitudes_of_accommodation_reports_the_relaxed_eyes_lens(plugin_path, tmp_path):
    folder = _compile(tmp_path, plugin_path, rule="acuity-law", accommodation="0, 2, 8")
    result = _run(["refraction.py"], folder, plugin_path)
    said = "; the model allowed for accommodation up to 8 D (0, 2, 8 D): this is the relaxed eye's lens"
    assert said in result.stdout and "may not be the most-plus lens" not in result.stdout
    (csv,) = (folder / "data").glob("*.csv")
    (note,) = pd.read_csv(csv)["refraction.most_plus_note"].dropna()
    assert said[2:] in note


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (run under xvfb-run)")
def test_a_gp_rule_given_amplitudes_of_accommodation_refuses_them_before_any_trial(plugin_path, tmp_path):
    folder = _compile(tmp_path, plugin_path, rule="ucb-ald", accommodation="0, 2, 8")
    result = _run(["refraction.py"], folder, plugin_path, succeeds=False)
    assert (
        "lensopt refraction 'refraction': Accommodation (D) is for the acuity-law rule only (the GP rules have no "
        "model of accommodation); clear it or choose the rule acuity-law" in result.stderr
    )
    assert not (folder / "frames" / "trial001.png").exists()  # not a letter shown


def _letter_heights_px(folder: Path, count: int) -> list[int]:
    """The height (px) of the dark pixels of each saved letter frame, trial 1 to ``count`` (darker than
    Builder's grey background)."""
    return [dark_span_px(folder / "frames" / f"trial{index:03d}.png", dark_below=64) for index in range(1, count + 1)]


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (run under xvfb-run)")
def test_a_full_screen_window_sizes_its_letters_on_the_framebuffers_pixels(plugin_path, tmp_path):
    """A calibration of 960 x 540 px (the screen's size in points, as on a Retina display) in a full-screen
    window of Xvfb's 1920 x 1080 px: letters sized for 1920 px across, twice the calibration's
    pixels, as lensopt run sizes them."""
    from lensopt.experiment.calibration import Calibration

    half = dict(SCREEN, screen_width_px=960, screen_height_px=540)
    calibration = f"Calibration({', '.join(f'{key}={value!r}' for key, value in half.items())})"
    folder = _compile(tmp_path, plugin_path, calibration=calibration, window="full-screen")
    ran = _run(["refraction.py"], folder, plugin_path)
    (csv,) = (folder / "data").glob("*.csv")
    frame = pd.read_csv(csv)
    trials = frame[frame["refraction.trial_index"].notna()]
    letter_logmar = trials["refraction.letter_logmar"].to_numpy()
    used = Calibration(**half).with_framebuffer(1920, 1080)

    assert np.allclose(trials["refraction.letter_height_px"], used.letter_height_px(letter_logmar))
    assert np.allclose(used.letter_height_px(letter_logmar), 2 * Calibration(**half).letter_height_px(letter_logmar))
    low_logmar, high_logmar = used.renderable_logmar(1080)
    assert (low_logmar - 1e-9 <= letter_logmar).all() and (letter_logmar <= high_logmar + 1e-9).all()
    measured = _letter_heights_px(folder, len(trials))
    assert np.all(np.abs(np.array(measured) - used.letter_height_px(letter_logmar)) <= 1.0), measured
    said = "the full-screen window is 1920 x 1080 px, not the calibration's 960 x 540"
    assert said in ran.stdout + ran.stderr
    assert "check that screen_width_cm of the loop's Calibration is this screen's width" in ran.stdout + ran.stderr


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (run under xvfb-run)")
def test_a_calibration_that_draws_none_of_the_loops_letters_names_its_letter_bounds_field(plugin_path, tmp_path):
    """Seen from 600 m, the largest letter a 300 px high window draws is about logMAR -1.1, below the
    loop's default Letter bounds (-1.0, 2.0): the script stops before its first trial, naming the
    loop's field (not a protocol file's key) and the sizes the screen draws."""
    far = dict(SCREEN, distance_cm=60000.0)
    calibration = f"Calibration({', '.join(f'{key}={value!r}' for key, value in far.items())})"
    folder = _compile(tmp_path, plugin_path, calibration=calibration)
    refused = _run(["refraction.py"], folder, plugin_path, succeeds=False)
    assert "CalibrationError: Letter bounds of lensopt refraction 'refraction' = [-1, 2] asks for letters larger" in (
        refused.stderr
    )
    assert "optimizer.letter_bounds_logmar" not in refused.stderr and "seat the patient nearer" in refused.stderr
    assert not list(folder.glob("frames/*.png"))  # no letter shown


def test_without_a_calibration_the_script_warns_that_its_letter_sizes_are_asked_as_given(plugin_path, tmp_path):
    script = (_compile(tmp_path, plugin_path, calibration="") / "refraction.py").read_text(encoding="utf-8-sig")

    assert "letter_bounds_logmar=(-1.0, 2.0)," in script and "refractionCalibration" not in script
    assert (
        "logging.warning(\"lensopt refraction 'refraction': no Calibration, so the letter sizes (-1.0, 2.0) logMAR "
        "are asked whatever this screen draws; give the loop your screen's Calibration\")"
    ) in script
    compile(script, "refraction.py", "exec")


def test_without_the_plugin_loaded_psychopys_compiler_silently_writes_a_trial_handler(compiled, tmp_path):
    """The trap of PsychoPy issue #5226: an unknown loop type becomes a TrialHandler, with a warning
    only. The compiler's command line loads no plugin, hence COMPILE's activatePlugins()."""
    shutil.copy(compiled / "refraction.psyexp", tmp_path)
    _run(["-m", "psychopy.scripts.psyexpCompile", "refraction.psyexp", "-o", "plain.py"], tmp_path)
    script = (tmp_path / "plain.py").read_text(encoding="utf-8-sig")
    assert "RefractionHandler" not in script and "data.TrialHandler2(" in script


def test_the_plugin_depends_on_what_lensopt_installs_not_a_second_psychopy():
    """Its dependencies, extras included, are the distributions lensopt's builder extra installs:
    depending on ``psychopy`` (the app) beside lensopt's ``psychopy-lib`` would install a second
    distribution owning the same ``psychopy/`` files."""
    import tomllib
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.requirements import Requirement

    declared = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]["dependencies"]
    pending = [Requirement(text) for text in declared]
    seen = set()
    while pending:
        requirement = pending.pop()
        if requirement.name in seen:
            continue
        seen.add(requirement.name)
        try:
            found = distribution(requirement.name)
        except PackageNotFoundError:
            pytest.fail(f"the plugin needs {requirement.name}, which this lensopt[builder] environment lacks")
        for text in found.requires or ():  # the extras it asks for bring their own requirements
            nested = Requirement(text)
            if nested.marker is not None and any(
                nested.marker.evaluate({"extra": extra}) for extra in requirement.extras
            ):
                pending.append(nested)
    assert {"lensopt", "psychopy-lib", "esprima"} <= seen


MAKE_KEYBOARD_PSYEXP = textwrap.dedent(
    """
    import sys
    from psychopy import experiment, plugins
    from psychopy.experiment.components.keyboard import KeyboardComponent
    from psychopy.experiment.routines import Routine

    plugins.scanPlugins()
    assert plugins.loadPlugin("psychopy-lensopt"), "the plugin did not load"
    from psychopy.experiment.loops import LensoptRefractionLoop

    exp = experiment.Experiment()
    exp.settings.params["Show info dlg"].val = False
    routine = Routine("letter", exp)
    exp.addRoutine("letter", routine)
    routine.addComponent(
        KeyboardComponent(exp, "letter", name="key_resp", storeCorrect=sys.argv[2] == "store", correctAns=sys.argv[3])
    )
    exp.flow.addRoutine(routine, 0)
    exp.flow.addLoop(LensoptRefractionLoop(exp, name="refraction", nTrials="5", seed="3"), 0, 2)
    exp.saveToXML(sys.argv[1])
    """
)


@pytest.mark.parametrize("store", ["store", "default"])
def test_a_keyboard_that_does_not_store_correct_answers_is_refused_when_the_loop_is_compiled(
    plugin_path, tmp_path, store
):
    """Found by an audit as a vision scientist: with Builder's Keyboard as it comes (Store correct off),
    the loop's default Response key_resp.corr stayed 0 and every answer was told wrong, silently."""
    make = [_script(tmp_path, "make.py", MAKE_KEYBOARD_PSYEXP), "k.psyexp", store, "$letter.lower()"]
    _run(make, tmp_path, plugin_path)
    compiling = _run(
        [_script(tmp_path, "compile.py", COMPILE), "k.psyexp", "k.py"], tmp_path, plugin_path, succeeds=store == "store"
    )
    if store == "store":  # told as written: the handler refuses what is neither right nor wrong
        script = (tmp_path / "k.py").read_text()
        assert "refraction.addResponse(key_resp.corr)" in script
        # Builder's own comparison: the key pressed, lower case ('z'), against the letter lowered ('Z' -> 'z')
        assert "key_resp.keys == str(letter.lower())" in script, script
    else:
        assert (
            "lensopt refraction 'refraction': its Response is key_resp.corr, but the Keyboard component 'key_resp' "
            "does not store correct answers, so every answer would be told wrong: tick its Store correct"
        ) in compiling.stderr


def test_a_keyboard_whose_correct_answer_is_the_capital_letter_is_refused_when_the_loop_is_compiled(
    plugin_path, tmp_path
):
    """The docs' recipe set the Correct answer to $letter: a Keyboard's keys are lower case ('z'),
    LetterStim's letters capitals ('Z'), so a patient naming every letter right was told wrong on every
    trial (an audit's perfect patient, pressing the keys through XTest: 8 of 8 recorded wrong)."""
    _run([_script(tmp_path, "make.py", MAKE_KEYBOARD_PSYEXP), "k.psyexp", "store", "$letter"], tmp_path, plugin_path)
    compiling = _run(
        [_script(tmp_path, "compile.py", COMPILE), "k.psyexp", "k.py"], tmp_path, plugin_path, succeeds=False
    )
    assert (
        "lensopt refraction 'refraction': the Keyboard component 'key_resp' compares its key, in lower case, with "
        "$letter, a capital letter, so every answer would be told wrong: set its Correct answer to $letter.lower()"
    ) in compiling.stderr
