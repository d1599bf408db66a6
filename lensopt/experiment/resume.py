"""Resuming a session: what it ran with, read back as it ran.

A resumed session (``lensopt run --resume N``) runs with its stored protocol (read as it was
stored: :func:`stored_protocol`), its stored calibration, seed and participant, and the answers
the store holds (those a rescue file kept first, :mod:`lensopt.experiment.rescue`); what the
command line says otherwise is noted on stderr and ignored (:func:`read_resumed`). Its optimizer
settings are those it ran with (what it stored; where it did not store them, what a replay of its
trials tells: :func:`lensopt.modes.as_ran.as_ran`), with a new
``--trials`` budget (:func:`resumed_settings`; one below an eye's answers is said,
:func:`rebuilt_eyes`); an eye its stopping rule ended before the resume
shows its end point again (:func:`earlier_end_point`); a resume with every answer in stores what a
kill left unstored and ends (:func:`finish_resumed`). :mod:`lensopt.experiment.session` runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lensopt.errors import CalibrationError, StoreError
from lensopt.experiment.calibration import Calibration
from lensopt.experiment.end_point import continue_advice_for, end_point, record_end
from lensopt.experiment.loop import stop_message
from lensopt.experiment.modes import Mode, mode_for
from lensopt.experiment.protocol import Protocol, protocol_from_dict
from lensopt.experiment.rescue import recover_rescued, rescue_paths
from lensopt.experiment.results import eye_done, report_eye, result_if_any
from lensopt.experiment.run_request import RunRequest, SessionOutcome
from lensopt.modes.as_ran import session_as_ran, stored_order
from lensopt.stopping import stop_threshold
from lensopt.store import RESUMED, SessionInfo, continue_advice, stored_budget
from lensopt.store.session_records import unreadable_events_text


def stored_protocol(data: dict, created_at: float) -> dict:
    """A session's stored protocol as it ran: a comparison table stored without ``order`` keeps the
    order its session ran with (:func:`stored_order`), so that a resumed session shows its lenses as
    it did."""
    order = stored_order(created_at)
    out = dict(data)
    for name in ("duel", "ranking"):
        if isinstance(out.get(name), dict) and "order" not in out[name]:
            out[name] = {**out[name], "order": order}
    return out


@dataclass(frozen=True)
class Resumed:
    """A stored session read back to be resumed: its ``info``, the ``protocol`` and feedback ``mode``
    it ran with, its ``calibration``, its answered ``records`` (the rescued ones included) and the
    optimizer ``settings`` it ran with."""

    info: SessionInfo
    protocol: Protocol
    mode: Mode
    calibration: Calibration
    records: list
    #: The optimizer settings it ran with (:func:`lensopt.modes.as_ran.as_ran`).
    settings: dict


def read_resumed(store, request, log, warn) -> Resumed:
    """Session ``request.resume`` of ``store`` as it ran (a one-line ``StoreError`` for one that
    cannot be resumed); what ``request`` (a :class:`~lensopt.experiment.session.RunRequest`) gives
    otherwise — a protocol, a start, an eye, a seed… — is ignored, each said by ``warn``; a rescue
    file's answers are stored first (said by ``log``)."""
    info = store.session(request.resume)
    protocol = protocol_from_dict(
        stored_protocol(info.protocol, info.created_at), source=f"stored protocol of session {info.session_id}"
    )
    mode = mode_for(protocol)
    if info.kind != mode.kind:
        raise StoreError(
            f"session {info.session_id} is a {info.kind} session but its protocol asks for "
            f"{protocol.feedback_mode} feedback; it cannot be resumed"
        )
    if not info.optimizer_settings:
        raise StoreError(
            f"session {info.session_id} stored no optimizer settings, so it cannot be resumed; "
            f"export its answers with `lensopt export {info.session_id}`"
        )
    try:
        calibration = Calibration.from_dict(info.calibration)
    except CalibrationError as exc:
        raise StoreError(
            f"the stored calibration of session {info.session_id} cannot be read ({exc}); it cannot be "
            f"resumed: export its answers with `lensopt export {info.session_id}`"
        ) from None
    skipped = unreadable_events_text(info, request.db_path)
    if skipped is not None:  # provenance only: the session resumes from its answers all the same
        warn(skipped)
    recover_rescued(store, mode, info.session_id, rescue_paths(request.db_path, info.session_id), log, info.created_at)
    records = mode.stored_trials(store, info.session_id)
    if request.protocol_path is not None:
        warn(f"resuming session {info.session_id}: its stored protocol is used, {request.protocol_path} is ignored")
    if request.start is not None:
        warn(f"resuming session {info.session_id}: its stored start is used, --start {request.start} is ignored")
    if request.eye is not None:
        warn(f"resuming session {info.session_id}: its stored eye is used, --eye {request.eye} is ignored")
    if request.axis_deg is not None:
        warn(
            f"resuming session {info.session_id}: its stored lens axis is used, --axis {request.axis_deg:g} is ignored"
        )
    if request.seed is not None and request.seed != info.seed:
        warn(
            f"resuming session {info.session_id}: its stored seed {info.seed} is used, --seed {request.seed} is ignored"
        )
    if request.observer is not None and request.observer != protocol.protocol.observer:
        warn(
            f"resuming session {info.session_id}: its stored observer ({protocol.protocol.observer}) answers, "
            f"--observer {request.observer} is ignored"
        )
    if request.participant is not None and request.participant.strip() != info.participant:
        warn(
            f"resuming session {info.session_id}: its stored participant {info.participant} is used, "
            f"--participant {request.participant} is ignored"
        )
    ran = session_as_ran(info, records, progress=lambda text: log(f"resuming session {info.session_id}: {text}"))
    if ran.note is not None:
        warn(f"resuming session {info.session_id}: {ran.note}")
        protocol = protocol_from_dict(ran.protocol, source=f"stored protocol of session {info.session_id}")
    return Resumed(info, protocol, mode, calibration, records, ran.settings)


def earlier_end_point(store, session_id: int, search, protocol: Protocol, eye: str | None, log):
    """The end point of an eye whose search ended before this resume (an OU session's eye that its
    stopping rule ended): from its stored result — stored now, and logged, if an interruption came
    between its last answer and its result — so that the closing screen and the log show every eye."""
    info = store.session(session_id)
    reported = [r for r in info.results if r.eye == eye]
    if not reported:
        reported = report_eye(store, session_id, search, protocol, log, eye)
    ending = end_point(search, protocol, eye, reported, (), stored_budget(info))
    if ending is not None:
        for line in ending.lines():
            log(f"ended before this resume: {line}")
    return ending


def rebuilt_eyes(mode: Mode, settings: dict, records: list, eyes, n_trials: int, session_id: int, trials_given, warn):
    """Each eye's search of a resumed session rebuilt from its ``settings`` and answered ``records``,
    and whether it is done (:func:`~lensopt.experiment.results.eye_done`, budget ``n_trials``). When
    an eye is still to run, one whose answers exceed this resume's ``--trials`` (``trials_given``)
    is said by ``warn`` — it gets no more trials — with the count that would continue it (a resume
    with every eye done says so in :func:`finish_resumed`)."""
    searches = {eye: mode.rebuild_optimizer(settings, records, eye, progress=True) for eye in eyes}
    done = {eye: eye_done(searches[eye], n_trials) for eye in eyes}
    if trials_given is None or all(done.values()):
        return searches, done
    for eye, search in searches.items():
        if search.n_trials > trials_given:
            warn(
                f"resuming session {session_id}: eye {eye or 'of this session'} already holds {search.n_trials} "
                f"answers, more than --trials {trials_given}, so it gets no more; give --trials above "
                f"{search.n_trials} to continue it"
            )
    return searches, done


def resumed_settings(stored: dict, protocol: Protocol, trials: int | None) -> dict:
    """A resumed session's optimizer settings: those it ran with (``stored``), but with ``--trials`` (``trials``) the
    stopping rule's ``max_trials`` of the protocol given that count, so that a session its budget
    ended can be given more trials (the stored rule would stop it again at once)."""
    if trials is None or stored.get("stop") is None or protocol.stop_rule is None:
        return stored
    return {**stored, "stop": protocol.stop_rule}


def finish_resumed(
    store,
    info: SessionInfo,
    request: RunRequest,
    protocol: Protocol,
    searches: dict,
    done: dict,
    n_records: int,
    log,
) -> SessionOutcome:
    """A resume of session ``info`` whose every eye is done (``done``: each eye's
    :func:`~lensopt.experiment.results.eye_done` of its rebuilt search in ``searches``, with the
    budget of ``protocol``; ``request``: the resume's, its ``--trials`` among them): each eye's result
    is stored (if a kill came before it was) and then the status, so that an interrupt here leaves
    the session as it was, to resume again; the log says what each eye holds and, for eyes short of
    their target, that they are no prescription and the command that gives them more trials (as the
    session's closing lines said: a bare ``--resume`` of such a session said only "nothing to do")."""
    n_trials = protocol.optimizer.trials
    eyes = protocol.session.eyes
    store.record_event(info.session_id, RESUMED, request.resumed_detail(n_trials))
    results, end_points = [], []
    budget = stored_budget(store.session(info.session_id))  # with this resume's --trials, just recorded
    for eye in eyes:
        n_answered, stopped = searches[eye].n_trials, done[eye]
        why = (
            "trials"
            if stopped is True
            else f"({stop_message(n_answered, stopped, stop_threshold(getattr(searches[eye], 'stop', None)))}, its stopping rule)"
        )
        label = f"eye {eye}: " if eye else ""
        holds = f"{n_answered} of {n_trials} {why}"
        if n_answered > n_trials:  # an earlier --resume --trials gave it more than this budget
            holds = f"{n_answered} trials, more than the budget of {n_trials} (--trials above {n_answered} adds more)"
        log(f"session {info.session_id} {label}holds {holds}; nothing to do")
        result = result_if_any(store, info, searches[eye], log, eye, protocol)
        results.append(result)
        reported = [] if result is None else [result]
        ending = end_point(searches[eye], protocol, eye, reported, (), budget)
        if ending is not None:
            end_points.append(ending)
            # as the session ended: "OD: this lens was not tried ...", "OS  not enough ..."
            ending.log_under_result(log)
    # the advice of the session's end while it holds (this resume ran nothing): the number its closing
    # console gave, from the confidence's trend, which a rebuilt search no longer has
    advice = continue_advice(info.events, info.n_trials)
    if advice is None:
        advice = continue_advice_for(end_points, request.window_options)
    elif request.fullscreen is not None:  # this resume's window options, when given
        advice = replace(advice, options=request.window_options)
    record_end(store, info.session_id, advice)
    if advice is not None:
        log(f"continue with: {advice.command(info.session_id, request.db_path)}")
    store.set_status(info.session_id, "finished")
    kept = tuple(r for r in results if r is not None)
    last = done[eyes[-1]]
    return SessionOutcome(
        info.session_id,
        "finished",
        n_records,
        None if last is True else searches[eyes[-1]].n_trials,
        None if last is True else last,
        kept[0] if kept else None,
        kept,
        None if protocol.stop is None else protocol.stop.confidence,
    )
