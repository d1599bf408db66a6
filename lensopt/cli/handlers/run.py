"""``lensopt run``'s handler: the PsychoPy experiment (its options: :mod:`lensopt.cli.run`)."""

from __future__ import annotations

import sys

from lensopt.cli.arguments import check_database_not_a_folder, check_output_folder
from lensopt.experiment.frames import refuse_another_sessions_frames
from lensopt.experiment.session import RunRequest, run_session
from lensopt.stopping import confidence_text
from lensopt.store import default_db_path


def run_command(args) -> int:
    check_database_not_a_folder(args.db, default_db_path())  # as sessions and export say it
    if args.save_frames is not None:
        # before the database, the display and the session row: a folder that cannot be made or
        # written (a file, /proc, an unwritable parent) is one line, and no session is left aborted
        check_output_folder("--save-frames", args.save_frames)
        if args.resume is None:
            refuse_another_sessions_frames(args.save_frames)
    request = RunRequest(
        db_path=args.db if args.db is not None else default_db_path(),
        protocol_path=args.protocol,
        participant=args.participant,
        observer=args.observer,
        seed=args.seed,
        trials=args.trials,
        frames_dir=args.save_frames,
        resume=args.resume,
        fullscreen=args.fullscreen,
        dashboard=args.dashboard,
        start=args.start,
        eye=args.eye,
        axis_deg=args.axis_deg,
    )
    # what the session does goes to stdout; what of the request it does not do (an option a resume
    # ignores, a --trials below the stopping rule's minimum) to stderr, as a note
    outcome = run_session(
        request,
        log=lambda message: print(message, flush=True),
        warn=lambda message: print(f"lensopt run: note: {message}", file=sys.stderr, flush=True),
    )
    # the stop is the last eye searched: named (in a session of both eyes the other may not have stopped)
    whose = f"{outcome.results[-1].eye} " if outcome.results and outcome.results[-1].eye else ""
    stopped = (
        ""
        if outcome.stopped_at is None
        else (
            f" ({whose}stopped by its stopping rule at {outcome.stopped_at} trials"
            + (
                ""
                if outcome.confidence is None
                else f", confidence {confidence_text(outcome.confidence, outcome.confidence_target)}"
            )
            + ")"
        )
    )
    print(f"session {outcome.session_id}: {outcome.status}{stopped}, {outcome.stored_text()}", flush=True)
    return 0
