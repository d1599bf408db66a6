"""lensopt in a PsychoPy Coder script: a RefractionHandler drives the letters, an ExperimentHandler
writes the usual wide CSV (one row per trial, lensopt's columns prefixed ``lensopt.``).

    python docs/examples/psychopy_handler.py                 # a person answers: Y named right, N wrong
    python docs/examples/psychopy_handler.py --simulated     # a simulated patient answers (unattended)
    LENSOPT_SIMULATED=1 xvfb-run -a python docs/examples/psychopy_handler.py --trials 20 --out /tmp/demo

Set the lens in ``trial["sphere_d"]``, ``trial["cylinder_d"]`` on the phoropter before each letter.
"""

# The options are read before PsychoPy is imported: importing it parses the command line itself
# (parse_known_args, for its own --prefs-json), and it would answer --help with its own usage. It
# leaves alone the options below, which it does not know.
# ruff: noqa: E402
import os
import random
import string

from lensopt.cli import OneLineParser
from lensopt.cli.arguments import positive_int

parser = OneLineParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--simulated", action="store_true", default=bool(os.environ.get("LENSOPT_SIMULATED")))
parser.add_argument("--trials", type=positive_int, default=40)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument(
    "--out",
    default="out/lensopt_handler",
    help="data file name, without .csv (its folder is made; out/ is not tracked)",
)
args = parser.parse_args()

import psychopy
from psychopy import core, data, event, visual

from lensopt.experiment.calibration import Calibration, letter_bounds_within
from lensopt.observer import SimulatedPatient
from lensopt.psychopy import RefractionHandler
from lensopt.refraction import RefractionOptimizer
from lensopt.refraction.letters import LETTER_BOUNDS_LOGMAR
from lensopt.stopping import StopRule

os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)

win = visual.Window((800, 600), units="pix", color="white", checkTiming=False)
calibration = Calibration(screen_width_cm=53.0, screen_width_px=1920, screen_height_px=1080, distance_cm=600.0)
# only the letters this set-up draws faithfully (strokes of a pixel or more, the letter within the
# window), as `lensopt run` limits them: here logMAR -0.80 to +1.18
letter_bounds_logmar = letter_bounds_within(
    LETTER_BOUNDS_LOGMAR, calibration.renderable_logmar(int(win.size[1])), calibration
)
letter = visual.TextStim(win, color="black", font="Arial")
patient = SimulatedPatient(-1.25, -0.75, seed=args.seed) if args.simulated else None
exp = data.ExperimentHandler(
    name="lensopt-handler",
    extraInfo={
        "participant": "sim" if patient else "P01",
        "date": data.getDateStr(),
        "expName": "lensopt-handler",
        "psychopyVersion": psychopy.__version__,
    },
    dataFileName=args.out,
    savePickle=False,
)

# --- the handler: about ten lines ---------------------------------------------------------------
optimizer = RefractionOptimizer(
    rule="ucb-ald",
    seed=args.seed,
    lens_step_d=0.25,
    n_alternatives=26,
    letter_bounds_logmar=letter_bounds_logmar,
    stop=StopRule(confidence=0.95, min_trials=min(15, args.trials), max_trials=args.trials),
)
handler = RefractionHandler(optimizer, n_trials=args.trials, exp=exp)
for trial in handler:
    letter.text = random.choice(string.ascii_uppercase)
    letter.height = calibration.letter_height_px(trial["letter_logmar"])
    letter.draw()
    win.flip()
    if patient is not None:
        correct = patient.respond(trial["letter_logmar"], trial["sphere_d"], trial["cylinder_d"])
    else:
        correct = event.waitKeys(keyList=["y", "n"])[0] == "y"
    handler.addResponse(correct)
    exp.nextEntry()
# -------------------------------------------------------------------------------------------------

result = handler.result()
print(f"best lens {result['best']} after {result['n_trials']} trials (stopped by the rule: {result['stopped']})")
exp.saveAsWideText(args.out + ".csv", fileCollisionMethod="overwrite")
exp.abort()  # saved above: no second file at exit
win.close()
core.quit()
