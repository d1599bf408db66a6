"""One experiment session: protocol + calibration + session store + optimizer + trial loop.

A new session reads the protocol, opens the window, keeps the optimizer's letter sizes inside
what the screen renders faithfully, records the session (protocol snapshot, calibration,
optimizer settings, seed, software version, and its kind: the feedback mode, letters, duel or
ranking) and runs the loop; every answer is committed to the store before the next stimulus is drawn.
A letter or duel session with a starting refraction (``[start]`` or ``--start``) searches the full
prescription (every trial stores its axes) and, when it finishes, stores and prints the
prescription in clinical notation with its 95 % intervals (:mod:`lensopt.experiment.results`).
``resume`` stores what the rescue file kept (:mod:`lensopt.experiment.rescue`), rebuilds the
optimizer from the stored trials (:mod:`lensopt.experiment.modes`) and continues at trial k + 1;
the optimizer's randomness depends only on (seed, trial number), so it proposes what the
interrupted session would have proposed. The windows: :mod:`lensopt.experiment.windows`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from lensopt.errors import CalibrationError, LensoptError, ProtocolError, StoreError
from lensopt.experiment.calibration import letter_bounds_within, narrowed_letters_note
from lensopt.experiment.console import ClinicianConsole
from lensopt.experiment.end_point import closing_screen, continue_advice_for, end_point, record_end
from lensopt.experiment.frames import claim_frames_folder, resumed_frames_problem
from lensopt.experiment.keyboard import KeyboardSource
from lensopt.experiment.loop import UNDO_PREVIOUS_EYE
from lensopt.experiment.modes import answered, eye_records, mode_for
from lensopt.experiment.protocol import Protocol, load_protocol
from lensopt.experiment.protocol_sections import MISSING_START_MESSAGE
from lensopt.experiment.rescue import recorder, rescue_paths, set_aside_foreign
from lensopt.experiment.results import check_end_stored, eye_done, report_eye, start_line
from lensopt.experiment.resume import earlier_end_point, finish_resumed, read_resumed, rebuilt_eyes, resumed_settings
from lensopt.experiment.run_request import RunRequest, SessionOutcome
from lensopt.experiment.search_sections import missing_eye_message
from lensopt.experiment.session_plan import SessionPlan, new_session_plan, renderable_logmar, with_budget
from lensopt.experiment.undo import undo_eye_end, undo_options, undoable_eye
from lensopt.experiment.windows import (
    check_dashboard,
    check_display,
    check_new_screen,
    dashboard_place_here,
    framebuffer_calibration,
    launch_dashboard,
    open_console,
    open_window,
    refuse_console_on_the_chart,
    screen_width_problem,
    wants_console,
    window_screen_width_px,
)
from lensopt.store import RESUMED, SessionStore, resume_command, resumed_budget, stored_budget
from lensopt.store.claim import claim_session
from lensopt.store.session_records import undone_suffix
from lensopt.store.verdict import answer_noun


def _responses_for(protocol: Protocol, seed: int, win):
    keyboard = KeyboardSource(win)
    if protocol.protocol.observer != "simulated":
        return keyboard
    return mode_for(protocol).simulated_source(protocol, seed, keyboard)


def run_session(
    request: RunRequest,
    *,
    responses=None,
    log: Callable[[str], None] = print,
    warn: Callable[[str], None] | None = None,
    window=None,
    console_window=None,
) -> SessionOutcome:
    """Run (or resume) a session to its end or until the person quits; returns what is stored.

    ``log`` is told what the session does; ``warn`` (default: ``log``) what of the request it does
    not do as asked — an option a resume ignores, a ``--trials`` below the stopping rule's minimum —
    which ``lensopt run`` says on stderr. ``responses`` replaces the answer source (tests inject key
    presses); ``window`` an already open PsychoPy window (``units="pix"``), which is then left open;
    ``console_window`` likewise the clinician's console (opened and closed here when the protocol has
    a clinician and none is given).
    """
    # a new session's protocol is read before the database is opened, so a bad one leaves no new file
    protocol: Protocol | None = None
    if request.resume is None:
        assert request.protocol_path is not None  # RunRequest requires it for a new session
        protocol = load_protocol(request.protocol_path, start_replaced=request.start is not None)
    if protocol is not None and request.start is None and protocol.start is not None and not protocol.start.given:
        raise ProtocolError(f"{protocol.source}: {MISSING_START_MESSAGE}")
    if protocol is not None:
        if request.start is not None:  # --start, once: the new session runs with this protocol
            protocol = protocol.with_start(request.start, warn or log)
        if request.eye is not None:  # --eye, once (checked against the protocol: OU is for letters)
            protocol = protocol.with_eye(request.eye)
        if protocol.start is not None and protocol.session.eye is None:
            raise ProtocolError(f"{protocol.source}: {missing_eye_message(protocol.feedback_mode)}")
        protocol = protocol.with_eye_starts(warn or log)  # each eye its own start
        problem = protocol.simulated_patient_problem(request.observer)
        if problem:
            raise ProtocolError(f"{protocol.source}: {problem}")
    if protocol is not None and window is None:
        check_display()  # a machine without a display or PsychoPy: said before a database file is made
        if console_window is None:
            fullscreen = protocol.display.fullscreen if request.fullscreen is None else request.fullscreen
            refuse_console_on_the_chart(protocol, fullscreen, request.observer or protocol.protocol.observer)
    if request.dashboard:  # its process would fail after the first trial: said before a database file is made
        check_dashboard()
    plan = None
    if protocol is not None:
        check_new_screen(protocol, request, window)
        # its optimizer is built before a database file is made: one that refuses the protocol (a
        # lens box too small for a duel's two lenses) leaves none behind
        plan = new_session_plan(request, protocol, warn or log, window)
    store = SessionStore(request.db_path, create=request.resume is None)  # a resume opens, never makes, one
    try:
        # a resumed session is claimed before anything else (a new one once it is created); an id
        # that is no session is said first (no lock file made for it)
        if request.resume is not None:
            store.session(request.resume)
        claim = contextlib.nullcontext() if request.resume is None else claim_session(request.db_path, request.resume)
        with claim:
            return _run(store, request, responses, log, log if warn is None else warn, window, console_window, plan)
    finally:
        store.close()


def _run(store, request: RunRequest, responses, log, warn, window, console_window=None, plan=None) -> SessionOutcome:
    if plan is None:  # a resume: its plan is read from the store
        resumed = _resumed_plan(store, request, log, warn, window)
        if not isinstance(resumed, SessionPlan):  # every answer is in: its results and status stored
            return resumed
        plan = resumed
    else:  # a new session: the first write to the database (a locked file shows up now)
        store.check_writable()
    protocol, fullscreen = plan.protocol, plan.fullscreen

    # The display is checked (the window opened) before the session is created or marked running:
    # a machine without a screen gets one line and leaves no session behind; so does a patient's
    # chart the console would be drawn on (a simulated patient sees nothing: a warning only).
    if request.resume is not None and window is None and console_window is None:
        refuse_console_on_the_chart(protocol, fullscreen, protocol.protocol.observer)
    win = window if window is not None else open_window(protocol, fullscreen)
    console_win = None
    try:
        width = None if window is not None or fullscreen else window_screen_width_px(win)
        mismatch = screen_width_problem(plan.calibration.screen_width_px, width)
        if mismatch is not None and mismatch[1]:
            raise CalibrationError(mismatch[0])
        if mismatch is not None:  # within a display's scaling (HiDPI): the clinician decides
            warn(mismatch[0])
        if wants_console(protocol):
            console_win = console_window if console_window is not None else open_console(protocol, log, fullscreen)
        with contextlib.ExitStack() as claims:
            return _run_in_window(store, request, responses, log, win, plan, console_win, claims, warn)
    finally:
        if console_win is not None and console_window is None:
            console_win.close()
        if window is None:
            win.close()


def _resumed_plan(store, request: RunRequest, log, warn, window) -> SessionPlan | SessionOutcome:
    """A resumed session's plan, its searches rebuilt from its answers; or, when every answer is in,
    its outcome (its results and status stored, nothing to run)."""
    resumed = read_resumed(store, request, log, warn)
    info, protocol, mode, calibration = resumed.info, resumed.protocol, resumed.mode, resumed.calibration
    records = resumed.records
    if request.frames_dir is not None:  # its frames go on from its next trial: not over another session's
        next_index = max((record.index for record in records), default=0) + 1
        problem = resumed_frames_problem(request.frames_dir, info, next_index)
        if problem:
            raise LensoptError(problem)
    # the trial budget: --trials, or without it the last one an earlier resume was given
    trials, given = request.trials, f"--trials {request.trials}"
    if trials is None:
        trials = resumed_budget(info.events)
        given = f"the --trials {trials} of an earlier resume"
    protocol = with_budget(protocol, trials, given, records, warn)
    # the session's settings, from which each eye's search is rebuilt with its own seed (eye_settings):
    # those it ran with (Resumed.settings; with --trials, the stopping rule's budget follows the new count)
    settings = resumed_settings(resumed.settings, protocol, trials)
    eyes, budget = protocol.session.eyes, protocol.optimizer.trials
    searches, done = rebuilt_eyes(mode, settings, records, eyes, budget, info.session_id, request.trials, warn)
    optimizer = searches[eyes[0]]  # each eye's search rebuilt once, here (a long history takes seconds)
    fullscreen = protocol.display.fullscreen if request.fullscreen is None else request.fullscreen
    # Everything that can fail on bad input fails here, before a window opens: the letter sizes
    # this set-up renders, and the first write to the database (a locked file shows up now).
    renderable = renderable_logmar(mode, protocol, calibration, fullscreen, window)
    store.check_writable()
    bounds = tuple(optimizer.settings_dict()["letter_bounds_logmar"])
    if letter_bounds_within(bounds, renderable, calibration) != bounds:
        raise CalibrationError(
            f"this set-up renders logMAR {renderable[0]:.2f} to {renderable[1]:.2f} but session "
            f"{info.session_id} shows {bounds[0]:g} to {bounds[1]:g}; resume on the original set-up"
        )
    if all(done.values()):  # every answer is in: its results and status stored, nothing to run
        return finish_resumed(store, info, request, protocol, searches, done, len(records), log)
    return SessionPlan(
        protocol=protocol,
        mode=mode,
        info=info,
        optimizer=optimizer,
        records=records,
        participant=info.participant,
        seed=info.seed,
        calibration=calibration,
        renderable=renderable,
        bounds=bounds,
        n_trials=protocol.optimizer.trials,
        fullscreen=fullscreen,
        settings=settings,
        searches=searches,
    )


def _run_in_window(
    store,
    request,
    responses,
    log,
    win,
    plan: SessionPlan,
    console_win=None,
    claims: contextlib.ExitStack | None = None,
    warn=None,
) -> SessionOutcome:
    """The session in its open window: created (or marked running again), run, and its result stored;
    a new session claimed in ``claims`` (:func:`lensopt.store.claim.claim_session`) once created."""
    claims = contextlib.ExitStack() if claims is None else claims
    protocol, mode, info, optimizer, records = plan.protocol, plan.mode, plan.info, plan.optimizer, plan.records
    participant, seed, calibration, bounds, n_trials = (
        plan.participant,
        plan.seed,
        plan.calibration,
        plan.bounds,
        plan.n_trials,
    )
    renderable, fullscreen = plan.renderable, plan.fullscreen
    if fullscreen:  # letters are sized on the framebuffer's pixels: a new session stores that calibration
        calibration = framebuffer_calibration(calibration, win.size, info is None, log if warn is None else warn)
    eyes = protocol.session.eyes
    # each eye's search is rebuilt from the session's settings with its own seed (eye_settings): on a
    # resume the stored ones, not those of the optimizer rebuilt for the first eye (the left eye's
    # seed would be offset twice)
    settings = plan.settings if plan.settings is not None else optimizer.settings_dict()
    if info is not None:
        session_id = info.session_id
        store.set_status(session_id, "running")
        store.record_event(session_id, RESUMED, request.resumed_detail(n_trials))
        eye = next(e for e in eyes if not eye_done((plan.searches or {})[e], n_trials))
        where = f"eye {eye}, " if eye else ""
        log(
            f"session {session_id} ({participant}): resuming at {where}trial "
            f"{len(answered(eye_records(records, eye))) + 1} of {n_trials}"
        )
    else:
        session_id = store.create_session(
            participant,
            protocol.to_dict(),
            calibration.to_dict(),
            settings,
            seed,
            kind=mode.kind,
            started=request.started_detail(protocol.source_file(), plan.file_trials),
        )
        try:
            claims.enter_context(claim_session(request.db_path, session_id))  # held until the session ends
        except StoreError:
            store.set_status(session_id, "aborted")  # never left "running" by a claim refused
            raise
        set_aside_foreign(request.db_path, session_id, log if warn is None else warn)  # its rescue files its own
        narrowed = narrowed_letters_note(protocol.optimizer.letter_bounds_logmar, bounds, fullscreen)
        if narrowed:  # said once the session runs (a set-up refused after this said nothing of letters)
            (log if warn is None else warn)(narrowed)
        eye_text = f", eye {protocol.session.eye}" if protocol.session.eye else ""
        log(
            f"session {session_id} ({participant}): {protocol.protocol.name}, {mode.kind} feedback, "
            f"rule {protocol.optimizer.rule}, {n_trials} trials{eye_text}, seed {seed}, database {request.db_path}"
        )
        if protocol.start is not None:
            log(start_line(protocol.start, protocol.lens.cylinder))
        elif protocol.lens.prompt and not protocol.lens.axis_deg:  # a clinician sets S and C: along which axis?
            log(
                "lenses are shown as sphere and a signed cylinder along the patient's own axis: set the "
                "phoropter's cylinder to that axis, or give --axis DEG (from the autorefraction or keratometry) "
                "to see every lens in clinical notation; without one, an end point with a cylinder is an "
                "estimate, not a prescription (no axis to print)"
            )
    log(f"calibration: {calibration.describe()}")
    if protocol.protocol.observer == "simulated":  # the truth its answers come from
        log(protocol.simulated.describe(protocol.lens, full_prescription=protocol.start is not None))
    log(
        f"renderable letter sizes: logMAR {renderable[0]:+.2f} to {renderable[1]:+.2f}; "
        f"letters shown from {bounds[0]:+.2f} to {bounds[1]:+.2f}"
    )

    status = "aborted"
    status_refused = None
    result = None
    stored_results: list = []
    try:
        actual = mode.renderable_logmar(protocol, calibration, win.size)
        if letter_bounds_within(bounds, actual, calibration) != tuple(bounds):
            raise CalibrationError(
                f"the window ({win.size[0]} x {win.size[1]} px) renders logMAR {actual[0]:.2f} to {actual[1]:.2f}, "
                f"not all of {bounds[0]:+.2f} to {bounds[1]:+.2f}; use a larger window or --fullscreen"
            )
        if request.frames_dir is not None:  # whose frames the folder holds: a resume into it checks it
            claim_frames_folder(request.frames_dir, request.db_path, store.session(session_id))
        if request.dashboard:
            launch_dashboard(session_id, request.db_path, log, dashboard_place_here(protocol, fullscreen))
        responses = responses if responses is not None else _responses_for(protocol, seed, win)
        record = recorder(store, session_id, rescue_paths(request.db_path, session_id), mode.append)
        console = None if console_win is None else ClinicianConsole(console_win)
        end_points: list = []
        position, quit_ = 0, False  # the eye searched next (its place in eyes): an undo goes back to an eye ended
        prebuilt = dict(plan.searches or {})
        while True:
            while position < len(eyes):
                eye, position = eyes[position], position + 1
                search = prebuilt.pop(eye) if eye in prebuilt else mode.rebuild_optimizer(settings, records, eye)
                if eye_done(search, n_trials):  # ended before this resume: its result belongs to the end too
                    ending = earlier_end_point(store, session_id, search, protocol, eye, log)
                    if ending is not None:
                        end_points.append(ending)
                    continue
                mine = eye_records(records, eye)
                per_eye = {} if eye is None else {"eye": eye, "index_offset": len(records) - len(mine)}
                if end_points:  # the eye before (OD before OS): its result on the console before this one starts
                    per_eye["before"] = "".join(f"{e.lines()[0]}\n" for e in end_points) + "\n"
                undo = undo_options(mode, store, session_id, settings, eye)
                previous = undoable_eye(records, eyes[: position - 1]) if undo else None
                if previous is not None:  # Backspace before this eye's first answer undoes that eye's last
                    undo["previous_eye"] = previous
                loop = mode.loop(
                    win,
                    protocol,
                    calibration,
                    search,
                    responses,
                    record,
                    mine,
                    seed=seed,
                    first_index=len(records) + 1,
                    frames_dir=request.frames_dir,
                    log=log,
                    console=console,
                    final=eye == eyes[-1],
                    **per_eye,
                    **undo,
                )
                result = loop.run(n_trials)
                optimizer = loop.optimizer  # rebuilt if the clinician undid an answer
                records = mode.stored_trials(store, session_id)
                if result.status == UNDO_PREVIOUS_EYE:
                    assert previous is not None  # offered only with an eye before
                    records = undo_eye_end(store, mode, session_id, records, previous, log)
                    position, status = eyes.index(previous), "aborted"
                    end_points = [e for e in end_points if eyes.index(e.eye) < position]
                    stored_results = [r for r in stored_results if r.eye != previous]
                    continue
                if result.status != "finished":
                    quit_ = True
                    break
                reported = report_eye(store, session_id, optimizer, protocol, log, eye)
                stored_results = [r for r in stored_results if r.eye != eye] + reported
                # every answer is in and its result stored: an interrupt from here on (at the closing screen)
                # leaves a finished session; one while the result is computed or stored leaves it stopped,
                # with the command that continues it, whose resume stores the result
                if eye == eyes[-1]:
                    status = "finished"
                budget = stored_budget(store.session(session_id))  # with this resume's --trials
                ending = end_point(optimizer, protocol, eye, reported, getattr(loop, "confidences", ()), budget)
                if ending is not None:
                    end_points.append(ending)
                    ending.log_under_result(log)  # under the lens its result logged (a prescription or an estimate)
            if quit_:
                break  # quit (paused and stopped), its status "aborted"
            status = "finished"
            advice = continue_advice_for(end_points, request.window_options)
            record_end(store, session_id, advice)
            if advice is not None:
                log(f"continue with: {advice.command(session_id, request.db_path)}")
            if console is None:
                break
            # on the console the command on a line of its own, its note under it; Backspace undoes the
            # last answer (of the last eye answered) and continues its eye
            resume = None if advice is None else advice.command(session_id, request.db_path, note_sep="\n")
            last_eye = undoable_eye(records, eyes) if mode.kind == "letters" else None
            if not closing_screen(
                console, responses, protocol, end_points, request.frames_dir, resume, undo=last_eye is not None
            ):
                break
            assert last_eye is not None  # offered only then
            records = undo_eye_end(store, mode, session_id, records, last_eye, log)
            position, status = eyes.index(last_eye), "aborted"
            end_points = [e for e in end_points if eyes.index(e.eye) < position]
            stored_results = [r for r in stored_results if r.eye != last_eye]
        stored_results.sort(key=lambda r: eyes.index(r.eye))
    finally:
        try:
            store.set_status(session_id, status)
        except StoreError as exc:  # the answers are stored; only the status could not be updated
            status_refused = str(exc).splitlines()[0]
        if status != "finished":  # a pause, a quit, a crash, Ctrl-C or a SIGTERM: how to go on
            with contextlib.suppress(StoreError):
                stored = store.session(session_id)
                noun = answer_noun(stored.kind)  # "6 duels" of a duel session
                trials = f"{stored.n_answers} {noun}{'' if stored.n_answers == 1 else 's'}"
                log(
                    f"stopped after {trials}{undone_suffix(stored.n_undone)}; continue with: "
                    f"{resume_command(session_id, request.db_path, request.window_options)}"
                )
    if status == "finished":
        stored = check_end_stored(
            store, session_id, stored_results, status_refused, request.db_path, request.window_options
        )
    else:
        stored = store.session(session_id)
    stopped_at = result.stopped_at if result is not None and status == "finished" else None
    return SessionOutcome(
        session_id,
        status,
        stored.n_answers,
        stopped_at,
        result.confidence if result is not None and stopped_at is not None else None,
        stored_results[0] if stored_results else None,
        tuple(stored_results),
        None if protocol.stop is None else protocol.stop.confidence,
        stored.n_undone,
    )
