"""lensopt in a PsychoPy Coder script: a RefractionHandler drives the letters, an ExperimentHandler
writes the usual wide CSV (one row per trial, lensopt's columns prefixed ``lensopt.``).

    python docs/examples/psychopy_handler.py                 # type the letter the patient names
    python docs/examples/psychopy_handler.py --simulated     # a simulated patient answers (unattended)
    LENSOPT_SIMULATED=1 xvfb-run -a python docs/examples/psychopy_handler.py --trials 20 --out /tmp/demo

Set the lens in ``trial["sphere_d"]``, ``trial["cylinder_d"]`` on the phoropter before each letter.

The letters are lensopt's own (the 26 capitals on a 5 x 5 stroke grid, drawn as polygons by
``LetterStim``), ``calibration.letter_height_px(letter_logmar)`` from top to bottom, as ``lensopt run``
draws them. Not a ``TextStim``: its ``height`` is the line height, and Arial capitals asked 100 px tall
come out 72 px (0.14 logMAR smaller than the optimizer believes, on every trial).

Besides lensopt's columns, each row has the letter shown (``letter``, ``letter_height_px``), the key
pressed (``response_key``), whether it named the letter (``correct``), the time from the flip that
showed the letter to the key (``rt_s``; empty for a simulated patient), the time of that flip on the
experiment's clock (``letter_onset_s``) and the ``seed`` that chose the letters (and the optimizer's
and simulated patient's draws): the same seed shows the same letters again.
"""

# The options are read before PsychoPy is imported: importing it parses the command line itself
# (parse_known_args, for its own --prefs-json), and it would answer --help with its own usage. It
# leaves alone the options below, which it does not know.
# ruff: noqa: E402
import os
import random

from lensopt.cli import OneLineParser
from lensopt.cli.arguments import check_output_folder, non_negative_int, positive_int

parser = OneLineParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--simulated", action="store_true", default=bool(os.environ.get("LENSOPT_SIMULATED")))
parser.add_argument("--trials", type=positive_int, default=40)
parser.add_argument("--seed", type=non_negative_int, default=1)
parser.add_argument(
    "--out",
    default="out/lensopt_handler",
    help="data file name, without .csv (its folder is made; out/ is not tracked)",
)
parser.add_argument("--frames", help="save each letter's frame as a PNG in this folder (to check what was drawn)")
args = parser.parse_args()
# a bad --out or --frames is refused here, in one line, before the window opens and anything is written
if os.path.isdir(args.out) or args.out.endswith(("/", os.sep)):
    parser.error(
        f"argument --out: {args.out} is a folder; give a data file name without .csv"
        f" (e.g. --out {os.path.join(args.out.rstrip('/' + os.sep) or '.', 'session')})"
    )
if os.path.isdir(args.out + ".csv"):
    parser.error(f"argument --out: {args.out}.csv is a folder; give another data file name")
try:
    check_output_folder(f"--out {args.out}: its folder", os.path.dirname(args.out) or ".")
    if args.frames:
        check_output_folder("--frames", args.frames)
except ValueError as exc:
    parser.error(f"argument {exc}")

import psychopy
from psychopy import core, data, event, visual

from lensopt.experiment.calibration import Calibration, letter_bounds_within
from lensopt.experiment.optotypes import ALPHABET, LetterStim
from lensopt.observer import SimulatedPatient
from lensopt.psychopy import RefractionHandler
from lensopt.refraction import RefractionOptimizer
from lensopt.refraction.letters import LETTER_BOUNDS_LOGMAR
from lensopt.stopping import StopRule

os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
if args.frames:
    os.makedirs(args.frames, exist_ok=True)

win = visual.Window((800, 600), units="pix", color="white", checkTiming=False)
calibration = Calibration(screen_width_cm=53.0, screen_width_px=1920, screen_height_px=1080, distance_cm=600.0)
# only the letters this set-up draws faithfully (strokes of a pixel or more, the letter within the
# window), as `lensopt run` limits them: here logMAR -0.80 to +1.18
letter_bounds_logmar = letter_bounds_within(
    LETTER_BOUNDS_LOGMAR, calibration.renderable_logmar(int(win.size[1])), calibration
)
letter = LetterStim(win, color="black")  # lensopt's optotypes, their height the calibration's
letters = ALPHABET  # 26 alternatives, as the optimizer is told below
letter_rng = random.Random(args.seed)  # the letters shown, from the recorded seed, whatever the answers
patient = SimulatedPatient(-1.25, -0.75, n_alternatives=len(letters), seed=args.seed) if args.simulated else None
misread_rng = random.Random(-args.seed - 1)  # the letter a simulated patient names instead
clock = core.Clock()  # the experiment's clock: letter onsets
rt_clock = core.Clock()  # reset by the flip that shows a letter
exp = data.ExperimentHandler(
    name="lensopt-handler",
    extraInfo={
        "participant": "sim" if patient else "P01",
        "date": data.getDateStr(),
        "expName": "lensopt-handler",
        "psychopyVersion": psychopy.__version__,
        "seed": args.seed,
    },
    dataFileName=args.out,
    savePickle=False,
)

# --- the handler and the trial loop --------------------------------------------------------------
optimizer = RefractionOptimizer(
    rule="ucb-ald",
    seed=args.seed,
    lens_step_d=0.25,
    n_alternatives=len(letters),
    letter_bounds_logmar=letter_bounds_logmar,
    stop=StopRule(confidence=0.95, min_trials=min(15, args.trials), max_trials=args.trials),
)
handler = RefractionHandler(optimizer, n_trials=args.trials, exp=exp)
for trial in handler:
    shown = letter_rng.choice(letters)
    height_px = calibration.letter_height_px(trial["letter_logmar"])
    letter.set_letter(shown, height_px)
    letter.draw()
    if args.frames:  # what the flip below shows
        win.getMovieFrame(buffer="back")
        win.saveMovieFrames(os.path.join(args.frames, f"trial{handler.thisN + 1:03d}.png"))
    win.callOnFlip(rt_clock.reset)
    win.flip()
    letter_onset_s = clock.getTime()  # just after the flip, as rt_clock's reset
    if patient is not None:
        correct = patient.respond(trial["letter_logmar"], trial["sphere_d"], trial["cylinder_d"])
        key = shown if correct else misread_rng.choice([c for c in letters if c != shown])
        key, rt_s = key.lower(), ""  # no time: an empty cell (None would be written "None")
    else:
        key, rt_s = event.waitKeys(keyList=[c.lower() for c in letters], timeStamped=rt_clock)[0]
    correct = key.upper() == shown
    for name, value in [
        ("letter", shown),
        ("letter_height_px", height_px),
        ("response_key", key),
        ("correct", int(correct)),
        ("rt_s", rt_s),
        ("letter_onset_s", letter_onset_s),
    ]:
        exp.addData(name, value)
    handler.addResponse(correct)
    exp.nextEntry()
# -------------------------------------------------------------------------------------------------

result = handler.result()
ended = {"confidence": "sure enough", "max_trials": "the rule's budget ran out, not sure enough"}
why = ended.get(result["stop_reason"], "every trial run")
print(f"best lens {result['best']} after {result['n_trials']} trials ({why})")
if result["most_plus_note"]:  # the clearest lens need not be the most plus for an eye that accommodates
    print(result["most_plus_note"])
exp.saveAsWideText(args.out + ".csv", fileCollisionMethod="overwrite")
exp.abort()  # saved above: no second file at exit
win.close()
core.quit()
