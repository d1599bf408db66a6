"""How late are a PsychoPy window's frames while the handler's worker decides ahead?

Shows each letter for 20 frames, paced at 60 Hz, while a simulated patient's session runs through
:class:`lensopt.psychopy.RefractionHandler`, and prints how late each frame was (its flip's end
after its 1/60 s slot): with the lookahead (the worker decides while the letter is on the screen)
and without it (the handler decides between letters, after the answer), or with a *thread*
deciding beside the window all along (``--thread``: why the lookahead uses a process)::

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python docs/examples/lookahead_frames.py
"""

from __future__ import annotations

import threading
import time

import numpy as np

from lensopt.cli import OneLineParser
from lensopt.cli.arguments import non_negative_int, positive_int
from lensopt.experiment.optotypes import LetterStim
from lensopt.observer import draw_patients
from lensopt.psychopy import RefractionHandler
from lensopt.refraction import RefractionOptimizer
from lensopt.stopping import StopRule

FRAME_S = 1 / 60
FRAMES_PER_LETTER = 20


def frame_lateness_ms(mode: str, trials: int, seed: int) -> np.ndarray:
    from psychopy import visual  # after main() has read the options (see there)

    win = visual.Window((800, 600), units="pix", fullscr=False, waitBlanking=False)
    letter = LetterStim(win, color="white")  # lensopt's optotypes, as a session draws them
    patient = draw_patients(1, seed)[0]
    optimizer = RefractionOptimizer("ucb-ald", seed=seed, stop=StopRule(confidence=0.95, min_trials=20))
    handler = RefractionHandler(optimizer, n_trials=trials, lookahead=mode == "lookahead")
    stop = threading.Event()
    if mode == "thread":  # a second optimizer deciding in a thread of this process, all along

        def decide_forever():
            other = RefractionOptimizer("ucb-ald", seed=seed + 1)
            while not stop.is_set():
                trial = other.ask()
                other.tell(trial, patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))

        threading.Thread(target=decide_forever, daemon=True).start()
    lateness, slot = [], time.perf_counter()
    for n, trial in enumerate(handler):
        letter.set_letter("EFPTOZ"[n % 6], height_px=80.0)
        for _ in range(FRAMES_PER_LETTER):
            slot += FRAME_S
            while time.perf_counter() < slot:
                time.sleep(0.0005)
            letter.draw()
            win.flip()
            lateness.append((time.perf_counter() - slot) * 1e3)
        handler.addResponse(bool(patient.respond(trial["letter_logmar"], trial["sphere_d"], trial["cylinder_d"])))
        slot = max(slot, time.perf_counter())  # the next letter's first slot starts once it is decided
    stop.set()
    win.close()
    return np.array(lateness)


def main() -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=positive_int, default=60)
    parser.add_argument("--seed", type=non_negative_int, default=3)
    parser.add_argument("--thread", action="store_true", help="also run with a deciding thread beside the window")
    args = parser.parse_args()
    # PsychoPy is imported only now: importing it parses the command line itself (parse_known_args,
    # for its own --prefs-json), and it would answer --help with its own usage. It leaves alone the
    # options above, which it does not know.
    from psychopy import logging

    logging.console.setLevel(logging.ERROR)
    modes = ["lookahead", "in-process"] + (["thread"] if args.thread else [])
    for mode in modes:
        late = frame_lateness_ms(mode, args.trials, args.seed)
        print(
            f"{mode:>10}: {late.size} frames, lateness median {np.median(late):.1f} ms, "
            f"p95 {np.percentile(late, 95):.1f} ms, max {late.max():.1f} ms, over one frame: {int((late > 1e3 * FRAME_S).sum())}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
