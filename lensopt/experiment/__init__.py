"""The PsychoPy experiment: calibrated letters, the trial loop, protocols and sessions.

* :mod:`~lensopt.experiment.optotypes` — the 26 letters on a 5 x 5 stroke grid (numpy geometry,
  PsychoPy ``ShapeStim`` drawing);
* :mod:`~lensopt.experiment.calibration` — letter size in pixels, renderable logMAR range;
* :mod:`~lensopt.experiment.protocol` — ``protocols/*.toml`` validated into frozen dataclasses (a
  new session's start: :mod:`~lensopt.experiment.protocol_start`);
* :mod:`~lensopt.experiment.keyboard` — answers from the keyboard, injected keys or a simulated patient;
* :mod:`~lensopt.experiment.loop` — the trial loop (its messages, pause, break and closing screens:
  :mod:`~lensopt.experiment.loop_screens`, the letters' :mod:`~lensopt.experiment.letter_screens`);
  :mod:`~lensopt.experiment.duel_loop` and
  :mod:`~lensopt.experiment.ranking_loop` — duels and rankings on a line of letters;
* :mod:`~lensopt.experiment.console` — the clinician's console, a second window (the lens to set,
  the answers, the end point); :mod:`~lensopt.experiment.clinician_keys` — undo, the lens actually
  set, notes; :mod:`~lensopt.experiment.undo` — Backspace after an eye ended; :mod:`~lensopt.experiment.end_point` — the prescription or "not enough answers";
* :mod:`~lensopt.experiment.modes` — what differs between letter, duel and ranking sessions;
* :mod:`~lensopt.experiment.session` — protocol + calibration + store + optimizer (a resume read back by :mod:`~lensopt.experiment.resume`);
  :mod:`~lensopt.experiment.windows` — the patient's window, the console, the dashboard (and the
  one-line refusals without a display, or of a screen that cannot draw the protocol's letters); :mod:`~lensopt.experiment.rescue` — answers a failing
  database refused, kept and recovered; :mod:`~lensopt.experiment.results` — what a finished
  search reports (the prescription stored, or the best lens).

PsychoPy is imported only where a window is used, so the geometry, calibration and protocol
modules work (and are tested) without a display.
"""
