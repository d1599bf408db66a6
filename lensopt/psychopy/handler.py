"""A PsychoPy trial handler over any lensopt optimizer (:class:`RefractionHandler`).

In the idiom of PsychoPy's ``StairHandler`` and ``QuestPlusHandler``::

    handler = RefractionHandler(RefractionOptimizer(seed=1), n_trials=40, exp=exp)
    for trial in handler:                   # {"trial_index": 1, "letter_logmar": 0.3, "sphere_d": ...}
        ...                                 # set the lens, show a letter of trial["letter_logmar"]
        handler.addResponse(correct)        # tells the optimizer
        exp.nextEntry()
    handler.best()                          # the optimizer's answer

The handler owns no model: each iteration is one ``optimizer.ask()`` (and, between trials, the
optimizer's own stopping rule), each response one ``optimizer.tell()``; the columns it writes are
read off the query (:mod:`lensopt.psychopy.columns`), so it adds no work of its own to a frame loop
(PsychoPy issue #4305: QuestPlusHandler freezing inside one).
"""

from __future__ import annotations

import contextlib
import numbers
import weakref
from collections.abc import Callable
from typing import Any

from lensopt.asktell import AskTellOptimizer
from lensopt.modes.registry import feedback_kind
from lensopt.psychopy.columns import answer_columns, query_columns, recorded_answer
from lensopt.psychopy.lookahead import LookaheadWorker, speculative_answer, speculative_answers
from lensopt.refraction.most_plus import accommodation_note
from lensopt.refraction.phoropter import round_lens

DEFAULT_HANDLER_NAME = "lensopt"
"""The handler's name when none is given: the prefix of its columns in the experiment's CSV."""


class RefractionHandler:
    """Iterate the trials an ask/tell ``optimizer`` chooses, PsychoPy-style.

    Parameters
    ----------
    optimizer:
        Any :class:`lensopt.asktell.AskTellOptimizer` (the letter, duel, ranking or full
        prescription refraction optimizers, or the benchmark-level ones), fresh or resumed.
    n_trials:
        The trial budget of this handler (trials it runs, not counting the optimizer's earlier
        history; 0: none, a resumed session whose budget is spent); ``None`` to run until the
        optimizer's stopping rule (``should_stop()``) says so. With both, whichever comes first ends
        the loop; a resumed optimizer the rule already stops gives no trial.
    name:
        The prefix of the handler's columns in an ``ExperimentHandler``'s data
        (``lensopt.letter_logmar``, ``lensopt.response``...), as PsychoPy prefixes a loop's.
    exp:
        An ``ExperimentHandler`` to write to (the same as ``exp.addLoop(handler)``).
    extraInfo:
        Kept as ``handler.extraInfo``, as PsychoPy's handlers keep it.
    lookahead:
        Decide the next trial while the patient looks at this one, for each possible answer, in a
        worker process (:mod:`lensopt.psychopy.lookahead`): ``addResponse`` up to the next trial
        then costs a message instead of a decision, and the frame loop never waits. The trials are
        the same, number for number. ``None`` (default): on for optimizers whose queries have few
        answers (the letter optimizers: correct or not; the two-parameter duels: first, second or
        the same), off otherwise; ``False``: decide in this process; ``True``: on, or a ValueError
        for an optimizer that cannot.

    Attributes, as PsychoPy's handlers name them: ``thisTrialN`` and ``thisN`` (0-based; -1 before
    the first trial), ``nTotal`` and ``nRemaining`` (the most trials, and those left, by ``n_trials``
    or the stopping rule's ``max_trials``), ``finished``, ``data`` (the answers, in order), ``trials`` (the trial dicts
    given, in order), ``otherData`` (what :meth:`addData` was given). ``stopped`` says whether the
    stopping rule ended the loop (or would have, at a last trial of the budget: checked after it,
    as :func:`~lensopt.asktell.run_session` checks); ``decision_ms`` the duration of each ``ask()``
    (``optimizer.last_decision_ms``: the worker's, with the lookahead). The trial dict's
    ``trial_index`` counts from 1, as lensopt's stored trials do.
    """

    def __init__(
        self,
        optimizer: AskTellOptimizer,
        n_trials: int | None = None,
        *,
        name: str = DEFAULT_HANDLER_NAME,
        exp=None,
        extraInfo: dict | None = None,
        autoLog: bool = True,
        lookahead: bool | None = None,
    ):
        for method in ("ask", "tell", "best"):
            if not callable(getattr(optimizer, method, None)):
                raise TypeError(
                    f"optimizer must satisfy lensopt's ask/tell contract (ask, tell, best); "
                    f"{type(optimizer).__name__} has no {method}()"
                )
        if n_trials is not None and (
            isinstance(n_trials, bool) or not isinstance(n_trials, numbers.Integral) or n_trials < 0
        ):
            raise ValueError(
                f"n_trials must be a whole number of trials, 0 or more (0: a resumed session with none left), "
                f"or None, got {n_trials!r}"
            )
        should_stop = getattr(optimizer, "should_stop", None)
        self._should_stop: Callable[[], bool] | None = should_stop if callable(should_stop) else None
        if n_trials is None and self._should_stop is None:
            raise ValueError(
                f"{type(optimizer).__name__} has no stopping rule (should_stop): give n_trials, the trial budget"
            )
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string (the columns' prefix), got {name!r}")
        self.optimizer = optimizer
        self.n_trials = None if n_trials is None else int(n_trials)
        self.name = name
        self.extraInfo = extraInfo
        self.autoLog = autoLog
        self.isTrials = True
        self.thisTrialN = -1
        self.thisN = -1
        self.finished = False
        self.stopped = False
        self.data: list = []
        self.otherData: dict[str, list] = {}
        self.trials: list[dict[str, Any]] = []
        self.decision_ms: list[float] = []
        self._query = None  # the query asked and not yet answered
        self._exp_ref: weakref.ReferenceType | None = None
        if lookahead not in (None, True, False):
            raise ValueError(f"lookahead must be True, False or None (automatic), got {lookahead!r}")
        answers = speculative_answers(optimizer)
        if lookahead and answers is None:
            raise ValueError(
                f"{type(optimizer).__name__}'s queries have no short list of answers to decide ahead for: "
                "use lookahead=False (or None)"
            )
        use_worker = answers is not None if lookahead is None else lookahead
        self._worker = LookaheadWorker(optimizer, self._should_stop is not None) if use_worker else None
        if exp is not None:
            exp.addLoop(self)

    # ------------------------------------------------------------------ PsychoPy's loop protocol
    def setExp(self, exp) -> None:
        """Attach an ``ExperimentHandler`` (``exp.addLoop(handler)`` calls this); held weakly, as
        PsychoPy's handlers hold theirs. Attached twice (``exp=exp`` and ``exp.addLoop(handler)``, as
        the docs offer either), it is listed once: listed twice, its loop's end unlisted one copy, and
        every later row of the data file carried its last trial's numbers."""
        if exp is not None and self.getExp() is exp:
            for listed in (getattr(exp, "loops", None), getattr(exp, "loopsUnfinished", None)):
                while isinstance(listed, list) and sum(x is self for x in listed) > 1:
                    del listed[max(i for i, x in enumerate(listed) if x is self)]
        self._exp_ref = None if exp is None else weakref.ref(exp)

    def getExp(self):
        """The attached ``ExperimentHandler``, or None."""
        return None if self._exp_ref is None else self._exp_ref()

    def __iter__(self):
        return self

    def __next__(self) -> dict[str, Any]:
        """The next trial as a dict of parameters; StopIteration at the end (budget or stopping rule)."""
        if self._query is not None:
            raise RuntimeError(
                f"{self.name}: trial {self.thisTrialN + 1} has no response: call addResponse(answer) "
                "before asking for the next trial"
            )
        if self.finished:
            self._finish()
        if self._budget_spent():
            # the rule's verdict after the last answer, as run_session's: a budget that ends with the
            # rule's own (max_trials = n_trials, as Builder's loop writes it) is "not sure enough"
            self.stopped = self._should_stop is not None and bool(self._should_stop())
            self._finish()
        query, decision_ms = self._decide()
        if query is None:  # the stopping rule
            self.stopped = True
            self._finish()
        self._query = query
        self.thisTrialN += 1
        self.thisN = self.thisTrialN
        if self._worker is not None and not self._budget_spent():
            self._worker.speculate(query)
        self.decision_ms.append(decision_ms)
        trial = {"trial_index": self.thisTrialN + 1, **query_columns(query)}
        self.trials.append(trial)
        for column, value in trial.items():
            self._write(column, value)
        self._write("decision_ms", decision_ms)
        return dict(trial)

    next = __next__  # PsychoPy's handlers allow ``handler.next()``

    @property
    def nRemaining(self) -> int | None:
        """Trials this loop may still give, as PsychoPy's ``TrialHandler.nRemaining`` (after
        ``next()``, not counting the trial just given): what is left of ``n_trials`` or, when it comes
        first, of the stopping rule's ``max_trials`` (``optimizer.stop``); the rule may end the loop
        sooner. ``None`` when neither bounds it; ``0`` once the loop has ended."""
        if self.finished:
            return 0
        given = self.thisTrialN + 1
        left = [] if self.n_trials is None else [self.n_trials - given]
        max_trials = getattr(getattr(self.optimizer, "stop", None), "max_trials", None)
        if isinstance(max_trials, numbers.Integral):
            told = self.optimizer.n_trials + (self._query is not None)
            left.append(max(0, int(max_trials) - told))
        return min(left) if left else None

    @property
    def nTotal(self) -> int | None:
        """The most trials this loop gives (PsychoPy's ``TrialHandler.nTotal``): those given so far
        plus :attr:`nRemaining`; ``None`` when nothing bounds it."""
        remaining = self.nRemaining
        return None if remaining is None else self.thisTrialN + 1 + remaining

    def _budget_spent(self) -> bool:
        return self.n_trials is not None and self.thisTrialN + 1 >= self.n_trials

    def _finish(self):
        self.finished = True
        self.close()
        exp = self.getExp()
        if exp is not None:
            exp.loopEnded(self)
        raise StopIteration

    def _decide(self) -> tuple[Any, float]:
        """The next query and the ``ask()``'s duration (ms), or ``(None, nan)`` when the stopping rule
        ends the loop; from the lookahead worker while it runs, else in this process."""
        # the rule is asked before the first trial too: an optimizer resumed from a state it already
        # says stop at (a script killed after its last answer) was given one trial more
        should_stop = self._should_stop
        check = should_stop is not None
        worker = self._worker
        if worker is not None and worker.alive:
            n_trials = self.optimizer.n_trials
            reply = worker.decide(n_trials, check) if self.thisTrialN < 0 else worker.next_decision(n_trials)
            if reply is not None:
                return reply["query"], float("nan") if reply["stop"] else float(reply["decision_ms"])
        if should_stop is not None and should_stop():
            return None, float("nan")
        query = self.optimizer.ask()
        return query, float(self.optimizer.last_decision_ms)

    def close(self) -> None:
        """Stop the lookahead worker, if any (the loop's end does it; so does leaving the loop
        early and dropping the handler). The optimizer and the data are untouched."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.close()

    def __del__(self):
        with contextlib.suppress(Exception):  # at interpreter exit the worker may be gone already
            self.close()

    def __getstate__(self) -> dict:
        """What a pickle keeps (PsychoPy's ``ExperimentHandler`` pickles its loops into the
        ``.psydat`` file before it writes the CSV): the optimizer, the trials and the data; not the
        lookahead worker (a process) nor the weak reference to the experiment. A handler unpickled
        decides in-process and is attached to no experiment."""
        state = self.__dict__.copy()
        state["_worker"] = None
        state["_exp_ref"] = None
        return state

    # ------------------------------------------------------------------ answers and data
    @property
    def query(self):
        """The optimizer's own query of the current trial (a ``Trial``, ``DuelTrial``...), or None
        once it is answered."""
        return self._query

    def addResponse(self, answer) -> None:
        """Record ``answer`` to the current trial: tell the optimizer, and write the answer's
        columns (``response``, or ``rank_1_lens``... for a ranking).

        The answer is what the optimizer's ``tell`` takes: True/False for a letter named correctly,
        ``"first"``/``"second"``/``"same"`` for a duel, lens indices clearest first for a ranking.
        Exactly one response per trial: before the first trial, or twice, it is a RuntimeError; an
        answer the optimizer refuses leaves the trial waiting for a valid one.
        """
        if self._query is None:
            when = "before the first trial" if self.thisTrialN < 0 else f"twice for trial {self.thisTrialN + 1}"
            if self.finished:
                when = f"after the loop ended (its {self.thisTrialN + 1} trials answered)"
            raise RuntimeError(f"{self.name}: addResponse() called {when}; one response per trial given by the loop")
        query = self._query
        recorded = recorded_answer(self.optimizer, answer)  # a ValueError here: nothing told, the trial waits
        columns = answer_columns(query, recorded)
        self.optimizer.tell(query, answer)
        self._query = None
        if self._worker is not None and not self._budget_spent():
            branch = speculative_answer(self.optimizer, answer)
            if branch is None:  # an answer the optimizer takes but the worker did not foresee
                self.close()
            else:
                self._worker.answer(branch)
        self.data.append(recorded)
        for column, value in columns.items():
            self._write(column, value)

    def _write(self, column: str, value) -> None:
        """One of lensopt's columns to the attached ``ExperimentHandler``'s current entry, as
        ``<name>.<column>`` (PsychoPy prefixes a loop's own values by its name: ``stairs.response``)."""
        exp = self.getExp()
        if exp is not None:
            exp.addData(f"{self.name}.{column}", value)

    def addData(self, dataName: str, value) -> None:
        """Other data of the current trial (a keyboard's ``key_resp.rt``...) to the attached
        ``ExperimentHandler``, under ``dataName`` as given — as ``TrialHandler.addData`` does, so a
        Builder component inside the loop writes its usual columns. Kept in ``otherData`` too."""
        self.otherData.setdefault(dataName, []).append(value)
        exp = self.getExp()
        if exp is not None:
            exp.addData(dataName, value)

    addOtherData = addData  # StairHandler's name for it

    # ------------------------------------------------------------------ results
    def best(self):
        """The optimizer's answer (``optimizer.best()``): the lens ``(sphere_d, cylinder_d)``, a
        ``PowerVector`` for the full prescription, a system point for the benchmark optimizers."""
        return self.optimizer.best()

    def result(self) -> dict[str, Any]:
        """``best``, ``lens_d`` (a search of sphere and cylinder: ``best`` on the optimizer's
        ``lens_step_d`` within its bounds, the lens a phoropter sets, as ``lensopt run`` stores its
        result; ``best`` itself without a step; None for the full prescription, whose
        ``optimizer.prescription()`` is the lens to write, and other optimizers), ``n_trials`` run
        by this handler, ``stopped`` (by the stopping rule), ``stop_reason`` (``"confidence"``: sure
        enough; ``"max_trials"``: the rule's budget ran out first, not sure enough; None when the
        rule did not end the loop), ``most_plus_note``
        (a search of sphere and cylinder: whether its lens is the most-plus one for an eye that
        accommodates, as the closing console says it, :func:`lensopt.refraction.most_plus.accommodation_note`;
        None for the full prescription and other optimizers) and, when the optimizer has one, its
        ``confidence`` in ``best``."""
        reason = getattr(self.optimizer, "stop_reason", None) if self.stopped else None
        result: dict[str, Any] = {
            "best": self.best(),
            "n_trials": self.thisTrialN + 1,
            "stopped": self.stopped,
            "stop_reason": reason() if callable(reason) else None,
        }
        kind = feedback_kind(self.optimizer)
        result["lens_d"] = None if kind is None else _lens_to_set(self.optimizer, result["best"])
        result["most_plus_note"] = None if kind is None else accommodation_note(self.optimizer, kind)
        confidence = getattr(self.optimizer, "confidence", None)
        if callable(confidence):
            result["confidence"] = float(confidence())
        return result

    def __repr__(self) -> str:
        return (
            f"<RefractionHandler {self.name!r} over {type(self.optimizer).__name__}: "
            f"trial {self.thisTrialN + 1} of {self.n_trials or 'until the stopping rule'}>"
        )


def _lens_to_set(optimizer, best) -> tuple[float, float] | None:
    """``best`` of a two-parameter search rounded to its optimizer's lens step within its bounds."""
    if not (isinstance(best, tuple) and len(best) == 2):
        return None
    settings = optimizer.settings_dict()
    bounds = (settings["sphere_bounds_d"], settings["cylinder_bounds_d"])
    return round_lens(best, settings.get("lens_step_d"), bounds)


LensoptHandler = RefractionHandler
"""The same handler under a name for optimizers that are not refractions."""

__all__ = ["DEFAULT_HANDLER_NAME", "LensoptHandler", "RefractionHandler"]
