"""The ``lensopt`` command.

Each subcommand's parser lives in its own module of this package and exposes
``register(subparsers) -> None``, which adds its parser and sets ``handler`` with
``parser.set_defaults``: a :class:`lensopt.cli.arguments.Handler` naming the function
``handler(args) -> int`` in :mod:`lensopt.cli.handlers`, imported only when the command runs. The
parsers import no handler (an import-linter contract) and the handlers import what they use at
their top, so ``lensopt --help`` stays fast.

Errors a person can act on (:class:`lensopt.errors.LensoptError`, and ``ValueError`` raised by
validation) are printed as one line, ``lensopt <command>: error: <message>``, with exit code 2 and
no traceback. Set ``LENSOPT_DEBUG=1`` to see the traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import importlib.util
import os
import re
import signal
import sys
import threading
import time

from lensopt import __version__
from lensopt.cli.arguments import point_at_null_device
from lensopt.errors import LensoptError, missing_extra

#: Subcommand modules, in the order ``lensopt --help`` lists them.
COMMAND_MODULES = (
    "simulate",
    "run",
    "calibrate",
    "sessions",
    "dashboard",
    "print_record",
    "bench",
    "hyperparameters",
)


#: A negative number as a value (``--true-sphere -1e1``, ``-1.5E+1``, ``-.5``, ``-inf``): argparse
#: (3.11) reads only ``-1`` and ``-1.5`` as numbers and took ``-1e1`` for an option ("expected one
#: argument", the value unnamed); lensopt has no option that looks like a number. A decimal comma
#: (``-1,5``) is read as a value too, for its option to say "write a decimal point".
NEGATIVE_NUMBER = re.compile(r"^-(?:(?:\d+[.,]?\d*|[.,]\d+)(?:e[+-]?\d+)?|inf(?:inity)?|nan)$", re.IGNORECASE)


#: The namespace attribute naming the parser that was left with options it does not know.
UNRECOGNIZED_BY = "_lensopt_unrecognized_by"


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line and exit with code 2, and which reads a
    negative number in any notation as a value (:data:`NEGATIVE_NUMBER`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER  # argparse internals (3.11, 3.12)

    def error(self, message):  # argparse API
        option = re.match(r"argument (--[\w-]+)(?:/-\w)?: expected one argument$", message)
        if option:  # argparse reads a value beginning with "-" (`--db -dash/x.db`) as an option
            message += f"; a value that begins with '-' is written {option.group(1)}=VALUE"
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def parse_known_args(self, args=None, namespace=None):  # argparse API
        # The options no parser knew are refused by the top parser (``lensopt``) once every
        # subcommand's parser has returned them. Each parser left with options of its own notes
        # them, innermost first (``lensopt run`` for ``lensopt run --protcol x``), so that the refusal
        # names each with its own --help; argparse puts an outer parser's own before its subcommand's.
        namespace, extras = super().parse_known_args(args, namespace)
        noted = list(getattr(namespace, UNRECOGNIZED_BY, ()))
        own = extras[: len(extras) - sum(len(given) for _, given in noted)]
        if own:
            setattr(namespace, UNRECOGNIZED_BY, (*noted, (self, tuple(own))))
        return namespace, extras

    def parse_args(self, args=None, namespace=None):  # argparse API
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            (parser, given), *outer = getattr(namespace, UNRECOGNIZED_BY, ((self, tuple(extras)),))
            also = "".join(f"; {p.prog}: {' '.join(more)} (see `{p.prog} --help`)" for p, more in outer)
            parser.exit(
                2,
                f"{parser.prog}: error: unrecognized arguments: {' '.join(given)} (see `{parser.prog} --help`){also}\n",
            )
        return namespace

    def _get_values(self, action, arg_strings):  # argparse internals
        # Python 3.11's argparse drops a value '--' (``--seeds=--``) and hands the handler an empty
        # list instead of an error; refuse it as argparse refuses a missing value.
        if arg_strings == ["--"] and action.nargs not in (argparse.PARSER, argparse.REMAINDER):
            raise argparse.ArgumentError(action, "expected a value, got '--'")
        return super()._get_values(action, arg_strings)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="lensopt",
        description="Refraction by contextual Bayesian optimization on a letter-acuity task.",
    )
    parser.add_argument("--version", action="version", version=f"lensopt {__version__}")
    subparsers = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name in COMMAND_MODULES:
        if importlib.util.find_spec(f"lensopt.cli.{name}") is None:
            continue
        importlib.import_module(f"lensopt.cli.{name}").register(subparsers)
    return parser


#: Options whose value is clinical notation, which may begin with a minus and hold no space
#: (``--start -1.00/-0.50x180``, ``--start -2.00DS``): argparse would take such a value for an option
#: ("expected one argument"), so it is attached to its option first (``--start=-1.00/-0.50x180``).
NOTATION_OPTIONS = ("--start",)


def attach_notation_values(argv: list[str]) -> list[str]:
    """``argv`` with each :data:`NOTATION_OPTIONS` option that is followed by a value beginning with a
    single minus written as ``--start=VALUE``."""
    out: list[str] = []
    values = iter(argv)
    for arg in values:
        if arg in NOTATION_OPTIONS:
            value = next(values, None)
            if value is not None and value.startswith("-") and not value.startswith("--"):
                out.append(f"{arg}={value}")
                continue
            out.extend([arg] if value is None else [arg, value])
            continue
        out.append(arg)
    return out


#: After a first signal, how long (s) the next ones are taken for the same request — a Ctrl-C held
#: down, a logout's SIGHUP then SIGTERM — and ignored, so that they cannot cut the clean-up short. One
#: after it is a new request and interrupts again: the first may have been lost where Python drops an
#: exception (a finalizer, a callback), and Ctrl-C must still stop the program.
REPEAT_GRACE_S = 2.0


@contextlib.contextmanager
def _terminate_as_interrupt(received: list[int], ending: bool = False):
    """While a command runs, SIGTERM (``kill``, a session manager logging out) and SIGHUP (a closed
    terminal) end it as Ctrl-C does — its clean-up runs: a session is marked aborted and says how to
    resume it, a campaign's workers are shut down — instead of the process vanishing mid-way. The
    signal's number goes to ``received`` (the exit code is 128 + it). A signal within
    :data:`REPEAT_GRACE_S` of the one before (Ctrl-C too) is ignored: a Ctrl-C held down raised
    inside the clean-up and the process died of it, without marking the session aborted or saying how
    to resume it. ``ending``: the process ends with the command (the ``lensopt`` program, not a call
    of :func:`main` in another program), so once a signal came they stay ignored through the closing
    message and the exit (PsychoPy's and pyglet's exit handlers printed tracebacks of them). A
    KeyboardInterrupt of such a signal raised where Python prints and drops it (a finalizer, a weakref
    callback) is not printed: the signal is in ``received``, and :func:`main` ends the command as
    interrupted when it returns. Only in the main thread (where Python delivers signals); elsewhere
    nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    # a signal ignored by whoever started us (``nohup`` ignores SIGHUP) stays ignored
    signals = [signum for signum in signals if signal.getsignal(signum) is not signal.SIG_IGN]
    last_s: list[float] = []

    def interrupt(signum, frame):
        now_s = time.monotonic()
        repeated = bool(last_s) and now_s - last_s[-1] < REPEAT_GRACE_S
        last_s.append(now_s)
        if repeated:  # the same request again (a key held down, a logout's second signal)
            return
        received.append(signum)
        raise KeyboardInterrupt

    unraisable_before = sys.unraisablehook

    def quiet_interrupt(unraisable) -> None:
        if not (received and isinstance(unraisable.exc_value, KeyboardInterrupt)):
            unraisable_before(unraisable)

    previous = {signum: signal.signal(signum, interrupt) for signum in signals}
    sys.unraisablehook = quiet_interrupt
    try:
        yield
    finally:
        sys.unraisablehook = unraisable_before
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_IGN if ending and received else handler)


def empty_option(argv: list[str]) -> str | None:
    """The first option given an empty value (``--db ""``, ``--out=``), else None. No option of
    lensopt means anything by an empty string: an empty path was taken as "not given" (``--db ""``
    fell back to ``$LENSOPT_DB``, ``export -o ""`` wrote to the screen, ``dashboard --report ""``
    opened the window)."""
    for k, token in enumerate(argv):
        if not token.startswith("-") or len(token) < 2:
            continue
        name, eq, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if (eq and not value.strip()) or (not eq and k + 1 < len(argv) and not argv[k + 1].strip()):
            return name
    return None


def command_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``argv`` names (``lensopt bench refraction``'s for ``bench
    refraction --out ''``), ``parser`` if it names none: the one whose refusal points at its --help."""
    for token in argv:
        subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]  # argparse internals
        if not subcommands:
            break
        if token in subcommands[0].choices:
            parser = subcommands[0].choices[token]
    return parser


def _escape_what_the_terminal_cannot_show() -> None:
    """stdout and stderr in an encoding without ``—``, ``±``, a participant's ``é`` (``LC_ALL=C``
    without UTF-8 mode, ``PYTHONIOENCODING=ascii``): such characters are written escaped (``\u2014``)
    instead of failing the command after its work (``lensopt print`` wrote its record, then said
    "error") or before its first trial."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding not in ("utf8", "utf8sig") and hasattr(stream, "reconfigure"):
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(errors="backslashreplace")


def _output_failure(exc: OSError) -> str | None:
    """What the command says when its own output cannot be written (``> /dev/full``, a full disk):
    an error without a file name of a kind writing a stream raises; None for any other. stdout is
    then pointed at the null device, so that Python's flush of it at exit does not fail again."""
    if exc.filename is not None or exc.errno not in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG):
        return None
    point_at_null_device(sys.stdout)
    return f"cannot write its output ({exc.strerror or exc})"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    ending = argv is None
    if ending:
        _escape_what_the_terminal_cannot_show()
    argv = sys.argv[1:] if argv is None else list(argv)
    empty = empty_option(argv)
    if empty is not None:
        named = command_parser(parser, argv)
        required = any(action.required and empty in action.option_strings for action in named._actions)
        fix = "give one" if required else f"give one or leave {empty} out"
        named.error(f"{empty} was given an empty value; {fix}")
    args = parser.parse_args(attach_notation_values(argv))
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    prog = " ".join(filter(None, ("lensopt", args.command, getattr(args, "bench_command", None))))
    received: list[int] = []
    # the dashboard's Qt event loop closes its window on these signals itself (an exception raised
    # inside a Qt slot aborts the process); ``ending``: the lensopt program (python -m lensopt too)
    terminate = contextlib.nullcontext() if args.command == "dashboard" else _terminate_as_interrupt(received, ending)
    try:
        with terminate:
            status = int(args.handler(args) or 0)
            if received:  # its KeyboardInterrupt raised in a finalizer, which Python drops: interrupted all the same
                raise KeyboardInterrupt
            return status
    except BrokenPipeError:  # the reader went away (`lensopt sessions --json | head`): nothing to say
        point_at_null_device(sys.stdout)
        return 0
    except OSError as exc:  # its output unwritable (a full disk); else a file the command's checks missed
        if os.environ.get("LENSOPT_DEBUG"):
            raise
        where = f": {exc.filename}" if exc.filename else ""
        fix = "; choose a shorter name" if exc.errno == errno.ENAMETOOLONG else ""
        problem = _output_failure(exc) or f"{exc.strerror or exc}{where}{fix}"
        print(f"{prog}: error: {problem}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.command in ("hyperparameters", "simulate"):  # a fit, a simulation: nothing is stored on the way
            kept = "; nothing was written"
        elif args.command == "print":  # the record is written whole or not at all (lensopt.private_files)
            kept = "; no record was written (a file of that name is as it was)"
        elif args.command != "bench":
            kept = "; everything answered so far is saved"
        elif getattr(args, "out", None) and hasattr(args, "scheduler"):  # a campaign: one record per finished run
            kept = f"; every finished run is kept in {args.out}: the same command resumes the campaign"
        else:
            kept = ""
        print(f"{prog}: interrupted{kept}", file=sys.stderr)
        return 128 + received[0] if received else 130
    except ModuleNotFoundError as exc:  # an optional part not installed (pip install lensopt: the core)
        error = missing_extra(exc, args.command)
        if error is None or os.environ.get("LENSOPT_DEBUG"):
            raise
        print(f"{prog}: error: {error}", file=sys.stderr)
        return error.exit_code
    except (LensoptError, ValueError) as exc:
        if os.environ.get("LENSOPT_DEBUG"):
            raise
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"{prog}: error: {message}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
