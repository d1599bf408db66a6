"""``lensopt run``'s handler: the PsychoPy experiment (its options: :mod:`lensopt.cli.run`)."""

from __future__ import annotations

import sys

from lensopt.cli.arguments import check_database_not_a_folder, check_output_folder, point_at_null_device
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
    log = SessionLog()
    outcome = run_session(request, log=log, warn=lambda message: log.note(f"lensopt run: note: {message}"))
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
    log(f"session {outcome.session_id}: {outcome.status}{stopped}, {outcome.stored_text()}")
    return 0


class SessionLog:
    """The session's log on stdout, its notes on stderr. A stream that can no longer be written (a
    closed pipe, `| head`; a full disk, `> /dev/full`) does not stop the session — its answers are in
    the database, not in the log: said once on stderr (if it still takes it), the log goes on without
    it. Before, the session stopped after its trial, exit 0 (a closed pipe) or a traceback (a full
    disk), and no resume command was given."""

    def __init__(self) -> None:
        self.lost: set[str] = set()

    def __call__(self, message: str) -> None:
        self._write("stdout", message)

    def note(self, message: str) -> None:
        self._write("stderr", message)

    def _write(self, name: str, message: str) -> None:
        if name in self.lost:
            return
        try:
            print(message, file=getattr(sys, name), flush=True)
        except OSError as exc:
            self.lost.add(name)
            point_at_null_device(getattr(sys, name))
            if name == "stdout":
                self.note(
                    f"lensopt run: note: its log can no longer be written to standard output "
                    f"({exc.strerror or exc}); the session goes on, every answer saved to its database"
                )
