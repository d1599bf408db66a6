"""The next trial decided while the patient still looks at this one: a handler's lookahead.

A PsychoPy frame loop cannot wait for a decision: at 60 Hz a frame lasts 16.7 ms, and a letter
decision (``tell``, the stopping rule's check, ``ask``) takes about that long on a small machine
(PsychoPy issue #4305: QuestPlusHandler freezing inside a loop). But a letter trial has two
answers only, and the patient takes a few hundred milliseconds to give one. So while the letter is
on the screen a *worker process* computes the next decision for both answers, and when the answer
comes the handler takes the one that matches: ``addResponse`` up to the next trial costs a
message, not a decision.

Why a process, not a thread: the decision is mostly Python, and a thread would hold the
interpreter lock against the frame loop (measured: a thread deciding beside a PsychoPy window
made frames late by up to 24 ms); a process has its own interpreter, runs on another core, and
lowers its own priority so that on a one-core machine the frame loop still comes first.

Why the decisions are the same: an optimizer's next decision is a function of its settings and its
history only (:mod:`lensopt.asktell`). The worker rebuilds the optimizer from its
``to_state()``, then follows the session exactly as the handler would — for each possible answer,
on a deep copy: ``tell``, the stopping rule's check, ``ask`` — and keeps the copy of the answer
given. Its queries are therefore the sequential ones, number for number. The handler's own
optimizer is told every answer at once (nothing waits for the worker to be on record) and never
asks; whatever a user calls on it afterwards (``best()``, ``confidence()``) it computes from its
history, as a resumed optimizer does. Should the worker fail, the handler says so once and decides
in-process from then on.

The protocol is one JSON object per line on the worker's stdin and stdout (floats are written with
``repr`` and so round-trip exactly): ``init`` (the optimizer's class and state), ``speculate`` (the query shown; decide for every answer),
``answer`` (keep that branch; its decision comes back; an answer that comes while the worker
still decides ahead is decided at once, after the decision under way: with a ranking's six orders
a quick answer need not wait for all six), ``decide`` (the decision of the current
history: a loop's first trial), ``quit``. The handler waits for the worker to be ready when it is
built (a second or so, before any trial), and from then on every decision is the worker's.

"Number for number" holds for an optimizer that is fresh or rebuilt from its state, as lensopt's
own resumed sessions are; an optimizer that has already decided in this process carries fits that
warm-start its next ones, which the worker, rebuilt from the history, fits from the prior: the same
decisions to the fit's tolerance (about 1e-10).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import importlib
import json
import os
import queue
import subprocess
import sys
import threading
import warnings
from typing import Any

#: What the worker process runs (``-c``, not ``-m``: the package imports this module already).
WORKER_COMMAND = "import sys; from lensopt.psychopy.lookahead import main; sys.exit(main())"

#: ``nice`` increment of the worker on POSIX: on a one-core machine the frame loop comes first.
WORKER_NICENESS = 5


def speculative_answers(optimizer) -> tuple | None:
    """The answers a query of ``optimizer`` can get, when it declares them few (its
    ``SPECULATIVE_ANSWERS``: ``(True, False)`` for a letter, ``("first", "second", "same")`` for a
    duel, the six orders of a ranking of three lenses; its queries are then dataclasses of numbers,
    or of dataclasses or tuples of dataclasses of numbers, which travel as JSON); None otherwise."""
    answers = getattr(optimizer, "SPECULATIVE_ANSWERS", None)
    if not answers or not callable(getattr(optimizer, "to_state", None)):
        return None
    return tuple(answers)


def speculative_answer(optimizer, answer):
    """The one of :func:`speculative_answers` that ``answer`` is, in the optimizer's own spelling
    (its ``canonical_answer``, e.g. a duel's True for ``"first"``, a ranking's whole order), or None."""
    canonical = getattr(optimizer, "canonical_answer", None)
    value = canonical(answer) if callable(canonical) else answer
    return next((a for a in speculative_answers(optimizer) or () if a == value), None)


def _query_to_json(query) -> dict[str, Any]:
    """A query as JSON: its class and its init fields; a field that is a dataclass itself (a full
    prescription duel's :class:`~lensopt.refraction.lens.Lens`), or a tuple of them (a ranking's
    lenses), is written the same way, nested."""
    fields = {field.name: _plain(getattr(query, field.name)) for field in dataclasses.fields(query) if field.init}
    return {"class": f"{type(query).__module__}:{type(query).__qualname__}", "fields": fields}


def _plain(value):
    """Tuples and arrays of numbers as lists (what ``dataclasses.asdict`` and ``json`` make of them),
    dataclasses as :func:`_query_to_json`."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _query_to_json(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _import(path: str):
    module, _, name = path.partition(":")
    target: Any = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    return target


def _query_from_json(data: dict[str, Any]):
    return _import(data["class"])(**{name: _decoded(value) for name, value in data["fields"].items()})


def _decoded(value):
    """A field of :func:`_query_to_json` back: nested dataclasses rebuilt, in lists too."""
    if isinstance(value, dict) and set(value) == {"class", "fields"}:
        return _query_from_json(value)
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return [_decoded(v) for v in value]
    return value


class LookaheadWorker:
    """The handler's side: a worker process deciding ahead for ``optimizer`` (see the module
    docstring). Every method returns None when the worker cannot answer; the worker is then stopped
    and the caller decides in-process."""

    def __init__(self, optimizer, check_stop: bool):
        self._process: subprocess.Popen[str] | None = None
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", WORKER_COMMAND],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        except OSError as error:
            self._fail(f"could not start the lookahead worker ({error})")
            return
        cls = type(optimizer)
        self._send(
            {
                "op": "init",
                "optimizer": f"{cls.__module__}:{cls.__qualname__}",
                "state": optimizer.to_state(),
                "check_stop": bool(check_stop),
            }
        )
        self._receive(optimizer.n_trials)  # ready: imported and rebuilt (about a second, before the loop)

    @property
    def alive(self) -> bool:
        return self._process is not None

    def decide(self, n_trials: int, check_stop: bool) -> dict | None:
        """The decision of the current history (a loop's first trial: there was no answer to foresee)."""
        self._send({"op": "decide", "check_stop": bool(check_stop)})
        return self._receive(n_trials)

    def speculate(self, query) -> None:
        """The query on the screen: decide now for each of its answers."""
        self._send({"op": "speculate", "query": _query_to_json(query)})

    def answer(self, answer) -> None:
        """The answer given: keep its branch (its decision is read by :meth:`next_decision`)."""
        self._send({"op": "answer", "answer": answer})

    def next_decision(self, n_trials: int) -> dict | None:
        """The decision that follows the answer sent: computed already, or waited for."""
        return self._receive(n_trials)

    def close(self) -> None:
        """Tell the worker to quit, without waiting for it to exit (its interpreter's shutdown takes
        a few hundred ms, which the loop's last frame must not wait for): a daemon thread reaps it."""
        process, self._process = self._process, None
        if process is None:
            return
        assert process.stdin is not None  # opened with stdin=PIPE
        try:
            process.stdin.write(json.dumps({"op": "quit"}) + "\n")
            process.stdin.close()
        except (OSError, ValueError):
            process.kill()
        if sys.is_finalizing():  # a handler dropped at interpreter exit: no thread can start now (it
            return  # would wait forever); the worker quits on its own, its parent is going too
        threading.Thread(target=_reap, args=(process,), daemon=True).start()

    # ------------------------------------------------------------------ internals
    def _fail(self, why: str) -> None:
        warnings.warn(f"lensopt handler: {why}; deciding in-process from now on", RuntimeWarning, stacklevel=4)
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            for pipe in (process.stdin, process.stdout):
                assert pipe is not None  # both opened with PIPE
                with contextlib.suppress(OSError):
                    pipe.close()

    def _send(self, message: dict) -> None:
        if self._process is None:
            return
        assert self._process.stdin is not None  # opened with stdin=PIPE
        try:
            self._process.stdin.write(json.dumps(message) + "\n")
            self._process.stdin.flush()
        except (OSError, ValueError) as error:
            self._fail(f"the lookahead worker stopped listening ({error})")

    def _receive(self, n_trials: int) -> dict | None:
        if self._process is None:
            return None
        assert self._process.stdout is not None  # opened with stdout=PIPE
        line = self._process.stdout.readline()
        if not line:
            self._fail(f"the lookahead worker ended (exit code {self._process.poll()})")
            return None
        reply = json.loads(line)
        if "error" in reply:
            self._fail(f"the lookahead worker failed: {reply['error']}")
            return None
        if reply["n_trials"] != n_trials:
            self._fail(f"the lookahead worker is at trial {reply['n_trials']}, the session at {n_trials}")
            return None
        if reply.get("query") is not None:
            reply["query"] = _query_from_json(reply["query"])
        return reply


def _reap(process: subprocess.Popen[str]) -> None:
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    assert process.stdout is not None  # opened with stdout=PIPE
    with contextlib.suppress(OSError):
        process.stdout.close()


# ---------------------------------------------------------------------- the worker process
def _decision(optimizer, check_stop: bool) -> dict[str, Any]:
    """What the handler does between two trials, in its order: the stopping rule, then ``ask``."""
    if check_stop and optimizer.should_stop():
        return {"stop": True, "query": None, "decision_ms": None, "n_trials": optimizer.n_trials}
    query = optimizer.ask()
    return {
        "stop": False,
        "query": _query_to_json(query),
        "decision_ms": float(optimizer.last_decision_ms),
        "n_trials": optimizer.n_trials,
    }


def _serve(lines, write, waiting=lambda: None) -> None:
    """The worker's loop: one message of ``lines`` at a time, replies to ``write``. ``waiting()``
    is the next message if one has come already, else None: while deciding ahead for a query's
    answers the worker looks between two of them, and an answer that comes before its branch is
    decided is decided at once (the rest are dropped), so a quick answer waits for at most the
    decision under way and its own — what matters when the answers are many (a ranking's orders)."""
    optimizer: Any = None  # from "init" on
    answers: tuple = ()
    check_stop = False
    branches: dict[str, tuple[Any, dict[str, Any]]] = {}  # json.dumps(answer) -> (optimizer told it, its decision)
    query = None  # the query of the branches
    early: str | None = None  # a message read while deciding ahead
    while True:
        line = early if early is not None else next(lines, None)
        early = None
        if line is None:
            return
        message = json.loads(line)
        op = message["op"]
        try:
            if op == "quit":
                return
            if op == "init":
                optimizer = _import(message["optimizer"]).from_state(message["state"])
                answers, check_stop = speculative_answers(optimizer) or (), message["check_stop"]
                _decision(copy.deepcopy(optimizer), check_stop)  # warm-up, thrown away: lazy imports, BLAS limits
                write({"ready": True, "query": None, "n_trials": optimizer.n_trials})
            elif op == "decide":
                write(_decision(optimizer, message["check_stop"]))
            elif op == "speculate":
                query = _query_from_json(message["query"])
                branches = {}
                for answer in answers:
                    early = waiting()
                    if early is not None:
                        break
                    branch = copy.deepcopy(optimizer)
                    branch.tell(query, answer)
                    branches[json.dumps(answer)] = (branch, _decision(branch, check_stop))
            elif op == "answer":
                key = json.dumps(message["answer"])
                if key not in branches:  # it came before its branch was decided: decide it now
                    branch = copy.deepcopy(optimizer)
                    branch.tell(query, message["answer"])
                    branches[key] = (branch, _decision(branch, check_stop))
                optimizer, decision = branches.pop(key)
                branches = {}
                write(decision)
            else:
                raise ValueError(f"unknown message {op!r}")
        except Exception as error:  # noqa: BLE001  # the handler decides in-process from then on, and says why
            write({"error": f"{type(error).__name__}: {error}"})


def main() -> int:
    if hasattr(os, "nice"):
        os.nice(WORKER_NICENESS)
    replies = sys.stdout
    sys.stdout = sys.stderr  # a stray print must not break the protocol

    def write(reply):
        replies.write(json.dumps(reply) + "\n")
        replies.flush()

    # A thread reads the handler's messages as they come (a pipe cannot be polled on Windows), so
    # that an answer can cut short the decisions made ahead for the others.
    inbox: queue.SimpleQueue[str | None] = queue.SimpleQueue()

    def read():
        for line in sys.stdin:
            inbox.put(line)
        inbox.put(None)

    threading.Thread(target=read, daemon=True).start()

    def waiting():
        try:
            return inbox.get_nowait()
        except queue.Empty:
            return None

    _serve(iter(inbox.get, None), write, waiting)
    return 0
