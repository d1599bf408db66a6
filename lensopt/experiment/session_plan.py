"""A session ready to run (:class:`SessionPlan`): what :mod:`lensopt.experiment.session` prepares
before a window opens — a new session's before its database is opened at all, so a protocol its
optimizer refuses (a lens box too small for a duel's two lenses) leaves no new file behind."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lensopt.experiment.calibration import Calibration, letter_bounds_within
from lensopt.experiment.modes import Mode, answered, eye_records, mode_for, session_settings_of
from lensopt.experiment.protocol import Protocol
from lensopt.experiment.run_request import MAX_SEED, RunRequest
from lensopt.experiment.windows import calibration_from_protocol, expected_window_size_px, screen_widths_px
from lensopt.store import SessionInfo


@dataclass(frozen=True)
class SessionPlan:
    """A session ready to run, everything checked: what was prepared before the window opened."""

    protocol: Protocol
    mode: Mode
    info: SessionInfo | None
    optimizer: Any
    records: list
    participant: str
    seed: int
    calibration: Calibration
    renderable: tuple
    bounds: tuple
    n_trials: int
    fullscreen: bool
    #: the stored optimizer settings of a resumed session (the stop's budget following --trials), or those a
    #: new session stores (with each eye's start, :func:`session_settings_of`); None: ``optimizer``'s
    settings: dict | None = None
    #: a new session's protocol file's ``[optimizer] trials``, before ``--trials``
    file_trials: int | None = None
    #: a resume's search of each eye, rebuilt from its answers (each taken once, before any is told)
    searches: dict | None = None


def _runs_trials(protocol: Protocol, records, trials: int) -> bool:
    """Whether a session with ``records`` answered runs any trial with a budget of ``trials`` per
    eye: an eye has answered fewer (a new session always)."""
    return min(len(answered(eye_records(records, eye))) for eye in protocol.session.eyes) < trials


def with_budget(protocol: Protocol, trials: int | None, given: str, records, warn: Callable[[str], None]) -> Protocol:
    """``protocol`` with the trial budget ``trials`` (None: its own), which ``given`` names
    (``--trials 30``); a budget below the stopping rule's minimum lowers it, and ``warn`` says so when
    the session still runs trials."""
    if trials is None:
        return protocol
    before = protocol.stop
    protocol = protocol.with_trials(trials)
    if (
        before is not None
        and protocol.stop is not None
        and protocol.stop.min_trials < before.min_trials
        and _runs_trials(protocol, records, trials)
    ):
        warn(
            f"{given} is below [stop] min_trials {before.min_trials}: the stopping rule "
            f"cannot end this session early, and its minimum is lowered to {protocol.stop.min_trials} "
            "(kept when the session is resumed with more trials)"
        )
    return protocol


def renderable_logmar(mode: Mode, protocol: Protocol, calibration: Calibration, fullscreen: bool, window) -> tuple:
    """The letter sizes this set-up renders: those of the window it opens (a ``window`` given is the
    caller's: its own size, checked when shown)."""
    widths = screen_widths_px() if window is None else None
    return mode.renderable_logmar(
        protocol, calibration, expected_window_size_px(protocol, calibration, fullscreen, widths)
    )


def new_session_plan(request: RunRequest, protocol: Protocol, warn: Callable[[str], None], window) -> SessionPlan:
    """A new session's plan, its optimizer built: ``protocol`` as read and given ``--start`` and
    ``--eye``, here given the rest of ``request`` (observer, axis, trials, seed)."""
    assert request.participant is not None  # RunRequest requires a participant for a new session
    seed = request.seed if request.seed is not None else secrets.randbelow(MAX_SEED + 1)
    if request.observer is not None:
        protocol = dataclasses.replace(
            protocol, protocol=dataclasses.replace(protocol.protocol, observer=request.observer)
        )
    if request.axis_deg is not None:
        protocol = protocol.with_lens_axis(request.axis_deg)
    calibration = calibration_from_protocol(protocol)
    mode = mode_for(protocol)
    file_trials = protocol.optimizer.trials  # the protocol file's, before --trials
    protocol = with_budget(protocol, request.trials, f"--trials {request.trials}", [], warn)
    fullscreen = protocol.display.fullscreen if request.fullscreen is None else request.fullscreen
    renderable = renderable_logmar(mode, protocol, calibration, fullscreen, window)
    bounds = letter_bounds_within(protocol.optimizer.letter_bounds_logmar, renderable, calibration)
    optimizer = mode.new_optimizer(protocol, seed, bounds)
    return SessionPlan(
        protocol=protocol,
        mode=mode,
        info=None,
        optimizer=optimizer,
        records=[],
        participant=request.participant.strip(),
        seed=seed,
        calibration=calibration,
        renderable=renderable,
        bounds=bounds,
        n_trials=protocol.optimizer.trials,
        fullscreen=fullscreen,
        settings=session_settings_of(optimizer, protocol),  # with each eye's start
        file_trials=file_trials,
    )
