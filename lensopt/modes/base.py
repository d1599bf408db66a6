"""The descriptor of a feedback mode (:class:`FeedbackMode`), shared by the three mode modules, and
which stored records an optimizer is told (the answers not undone, of the eye being searched)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from lensopt.refraction.trial import TrialHistory

#: The left eye's search of a session of both eyes uses the session's seed plus this, so its lenses
#: and letter sizes are its own draws (the right eye's use the seed itself).
OS_SEED_OFFSET = 1


def answered(records) -> list:
    """The stored ``records`` that count: every one but the answers the clinician undid (``void``)."""
    return [record for record in records if not getattr(record, "void", False)]


#: From how many stored answers telling them again (a resume's rebuild, a record's replay) shows a
#: progress bar on a terminal: fewer are told in well under a second; a 1,000-trial session's
#: record took 15 s to print, in silence.
ANSWERS_BAR_FROM = 50


def answers_bar(n_answers: int, what: str) -> Callable[[list], Any] | None:
    """``shown`` for :meth:`FeedbackMode.rebuild_optimizer`: a progress bar ``what`` (``"replaying
    session 7"``) on stderr while ``n_answers`` stored answers are told, on a terminal only and from
    :data:`ANSWERS_BAR_FROM` of them; None otherwise."""
    if n_answers < ANSWERS_BAR_FROM:
        return None
    return functools.partial(tqdm, desc=what, unit="answer", file=sys.stderr, disable=None, leave=False)


def stored_session_problem(exc: Exception) -> str:
    """The one line for a stored session whose optimizer refuses its stored settings or answers (a
    rule ``5``, a sphere of ``1e308``: another program changed the database): the optimizer's own
    words (``unknown rule 5; choose one of ...``, ``tell a trial within the bounds``) read as if the
    command line were wrong."""
    return (
        f"the session's stored settings and answers do not rebuild its optimizer ({exc}); if another "
        "program changed the database, restore it from a copy"
    )


#: The key of a session of both eyes' optimizer settings that holds each eye's own starting
#: refraction (``{"OD": "-2.25 / -0.75 x 180", "OS": "-1.50 / -0.50 x 010"}``); the settings'
#: ``start`` is the first eye's. Sessions that started both eyes from one lens have none.
EYE_STARTS = "eye_starts"


def eye_settings(settings: dict, eye: str | None) -> dict:
    """The optimizer settings of eye ``eye``'s search: the session's, with the left eye's own seed and
    each eye's own start (:data:`EYE_STARTS`)."""
    starts = settings.get(EYE_STARTS)
    if starts is not None:
        settings = {key: value for key, value in settings.items() if key != EYE_STARTS}
        if eye in starts:
            settings["start"] = starts[eye]
    if eye != "OS":
        return settings
    return dict(settings, seed=(int(settings["seed"]) + OS_SEED_OFFSET) % 2**63)


def eye_records(records, eye: str | None) -> list:
    """The stored ``records`` of eye ``eye`` (all of them in a session that names no eye, or one eye).
    A comparison's record stores no eye: its session searches one eye at most (OU is for letters),
    so each belongs to the eye asked for."""
    return [record for record in records if getattr(record, "eye", eye) == eye]


def told_records(records, session_eye: str | None = None) -> tuple[str | None, list]:
    """The eye whose search the last of ``records`` belongs to, and the records its optimizer was told:
    that eye's, but the answers undone. (A session of both eyes searches OD, then OS.) A comparison's
    record stores no eye (:func:`eye_records`): it belongs to ``session_eye``, the one eye its session
    tests (the left eye's search has its own seed, :func:`eye_settings`)."""
    eye = getattr(records[-1], "eye", session_eye) if records else None
    return eye, answered(eye_records(records, eye))


@dataclass(frozen=True)
class FeedbackMode:
    """What one feedback mode is, in the refraction domain (no store, no user interface).

    ``kind`` is the session kind the store keeps (``sessions.kind``: ``"letters"``, ``"duel"``,
    ``"ranking"``); ``title`` names a session of this mode in a summary ("duel refraction").
    ``optimizer_class`` satisfies :class:`lensopt.asktell.AskTellOptimizer`, has
    ``from_settings(settings, history)`` and takes the box, letter bounds, ``n_initial`` and
    ``lens_step_d``; ``option_names`` are the keyword arguments only it takes (a protocol's or the
    command line's options are filtered through them, :meth:`optimizer_options`).
    ``query_type`` is what ``ask()`` returns; ``answers`` the valid answers when they are a fixed
    set (None when they depend on the query, as a ranking's order does) and ``valid_answer(query,
    answer)`` says whether an answer fits a query. ``respond(patient, query, **answer_options)``
    is the simulated patient's answer (:class:`lensopt.observer.SimulatedPatient`), with
    ``answer_options`` the keywords it takes (a duel's ``tie_threshold``). ``history_pair(record)``
    turns one stored record (the store's record of this kind, read by its attributes) into the
    ``(query, answer)`` pair the optimizer is told. ``comparison`` says whether a trial compares
    lenses (the dashboard's comparison panels) or shows letters through one lens (the letter
    panels); ``certainty`` whether the optimizer has a stopping rule and a certainty of its best
    lens (``stop=``, ``should_stop()``, ``certainty()``).
    """

    kind: str
    title: str
    optimizer_class: type[TrialHistory]
    option_names: tuple[str, ...]
    query_type: type
    answers: tuple | None
    valid_answer: Callable[[Any, Any], bool]
    respond: Callable[..., Any]
    answer_options: tuple[str, ...]
    history_pair: Callable[[Any], tuple]
    comparison: bool
    certainty: bool

    def optimizer_options(self, options: Mapping[str, Any]) -> dict:
        """The entries of ``options`` this mode's optimizer takes (:attr:`option_names`)."""
        return {name: options[name] for name in self.option_names if name in options}

    def new_optimizer(self, options: Mapping[str, Any] | None = None, **common):
        """A new optimizer: ``common`` keywords (rule, seed, bounds...) and, of ``options``, those
        this mode's optimizer takes."""
        return self.optimizer_class(**common, **self.optimizer_options(options or {}))

    def history(self, records) -> list:
        """``(query, answer)`` pairs of the stored ``records``, in order, as the optimizer is told them."""
        return [self.history_pair(record) for record in records]

    def stored_optimizer_class(self, settings: dict) -> type[TrialHistory]:
        """The optimizer that wrote the stored ``settings`` (its ``settings_dict()``): :attr:`optimizer_class`
        unless a mode has more than one."""
        return self.optimizer_class

    def rebuild_optimizer(self, settings: dict, records, shown: Callable[[list], Any] | None = None):
        """The optimizer of a stored session (its ``settings_dict()``), told every stored answer in order;
        settings or answers it refuses are a one-line ValueError saying so (:func:`stored_session_problem`).
        ``shown(history)`` wraps the answers as they are told (a progress bar)."""
        history = self.history(records)
        try:
            told = history if shown is None else shown(history)
            return self.stored_optimizer_class(settings).from_settings(settings, told)
        except ValueError as exc:
            raise ValueError(stored_session_problem(exc)) from exc

    def responder(self, patient, **answer_options) -> Callable[[Any], Any]:
        """The simulated ``patient``'s answer to a query, as ``respond(query)``."""
        unknown = sorted(set(answer_options) - set(self.answer_options))
        if unknown:
            raise ValueError(f"{', '.join(unknown)} do not apply to {self.kind} feedback")

        def respond(query):
            return self.respond(patient, query, **answer_options)

        return respond

    def is_valid_answer(self, query, answer) -> bool:
        """Whether ``answer`` is a valid answer to ``query`` in this mode."""
        return bool(self.valid_answer(query, answer))
