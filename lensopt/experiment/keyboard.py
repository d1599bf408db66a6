"""Where answers come from: the real keyboard, injected key presses (tests), a simulated patient.

Every source has the same two methods, called by the trial loop after it has drawn the screen:

* ``letter_response(trial, letter, keys, timeout_s, index)`` -> :class:`KeyPress` or ``None`` (timed out),
  while a letter is on screen; ``keys`` are the keys that count (letter keys, pass, pause);
* ``duel_response(trial, letters, keys, timeout_s, index)`` -> :class:`KeyPress` or ``None``, while
  the line of letters of a duel is on screen; ``keys`` are the answer keys (1, 2, same) and pause;
* ``ranking_response(trial, letters, keys, timeout_s, index, given)`` -> :class:`KeyPress` or
  ``None``, the next key of a ranking while its line of letters is on screen; ``keys`` are the lens
  keys and pause, ``given`` the lens indices already ranked (clearest first);
* ``wait_for(keys, timeout_s=None)`` -> :class:`KeyPress` or ``None``, on instruction, lens-prompt,
  break and pause screens.

Key names are PsychoPy's (``"a"``, ``"space"``, ``"escape"``); letter keys are lower case.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from lensopt.modes import duels, letters, rankings
from lensopt.observer import SimulatedPatient

POLL_INTERVAL_S = 0.002
"""Sleep between keyboard polls while waiting (keeps the CPU free without adding visible latency)."""


@dataclass(frozen=True)
class KeyPress:
    """One key press: PsychoPy key name and the time since the screen appeared (s)."""

    key: str
    rt_s: float | None


def letter_key(letter: str) -> str:
    """PsychoPy name of the key that answers ``letter`` (``"K"`` -> ``"k"``)."""
    return letter.lower()


class KeyboardSource:
    """The real keyboard, through ``psychopy.event`` (pyglet key events of the window)."""

    def __init__(self, win=None):
        from psychopy import core, event

        self._event = event
        self._clock = core.Clock()
        self.win = win

    def start_timer(self) -> None:
        """Call right after the flip that shows the screen the answer refers to."""
        self._clock.reset()

    def wait_keys(self, keys: Sequence[str], timeout_s: float | None) -> KeyPress | None:
        """First press of one of ``keys``; ``None`` after ``timeout_s`` (``None``: wait for ever)."""
        deadline = None if timeout_s is None else self._clock.getTime() + timeout_s
        while True:
            pressed = self._event.getKeys(keyList=list(keys), timeStamped=self._clock)
            if pressed:
                key, rt_s = pressed[0]
                return KeyPress(key, float(rt_s))
            if deadline is not None and self._clock.getTime() >= deadline:
                return None
            time.sleep(POLL_INTERVAL_S)

    def letter_response(self, trial, letter, keys, timeout_s=None, index=0):
        return self.wait_keys(keys, timeout_s)

    def duel_response(self, trial, letters, keys, timeout_s=None, index=0):
        return self.wait_keys(keys, timeout_s)

    def ranking_response(self, trial, letters, keys, timeout_s=None, index=0, given=()):
        return self.wait_keys(keys, timeout_s)

    def wait_for(self, keys, timeout_s=None):
        self._event.clearEvents("keyboard")
        self.start_timer()
        return self.wait_keys(keys, timeout_s)

    def clear(self) -> None:
        self._event.clearEvents("keyboard")


class InjectedKeySource:
    """Answers from a script of key names (tests): each call consumes the next key.

    ``keys`` may hold ``(key, rt_s)`` pairs; a bare name gets ``rt_s = default_rt_s``. While a letter
    is shown, ``"<correct>"`` presses that letter's key and ``"<wrong>"`` another letter's key. A
    scripted key that the screen does not accept is skipped, as a real key press would be. Running
    out of keys raises ``RuntimeError``, so a test cannot hang.
    """

    CORRECT, WRONG = "<correct>", "<wrong>"

    def __init__(self, keys: Iterable, default_rt_s: float = 0.5):
        self._script = [(k, default_rt_s) if isinstance(k, str) else (k[0], float(k[1])) for k in keys]
        self.consumed: list[str] = []

    def start_timer(self) -> None:
        pass

    def _next(self, keys, letter=None):
        while self._script:
            key, rt_s = self._script.pop(0)
            self.consumed.append(key)
            if letter is not None and key == self.CORRECT:
                key = letter_key(letter)
            elif letter is not None and key == self.WRONG:
                key = next(k for k in keys if len(k) == 1 and k.isalpha() and k != letter_key(letter))
            if key in keys:
                return KeyPress(key, rt_s)
        raise RuntimeError(f"injected key script ran out while waiting for one of {sorted(keys)}")

    def letter_response(self, trial, letter, keys, timeout_s=None, index=0):
        return self._next(keys, letter)

    def duel_response(self, trial, letters, keys, timeout_s=None, index=0):
        return self._next(keys)

    def ranking_response(self, trial, letters, keys, timeout_s=None, index=0, given=()):
        return self._next(keys)

    def wait_for(self, keys, timeout_s=None):
        return self._next(keys)

    def clear(self) -> None:
        pass

    @property
    def remaining(self) -> int:
        return len(self._script)


class SimulatedSource:
    """A :class:`~lensopt.observer.SimulatedPatient` answers; the window keeps showing every trial.

    The patient decides correct or not with ``respond`` (the patient of trial ``index`` is seeded
    from ``(seed, index)``, so a resumed session answers as an uninterrupted one would); a correct
    answer presses the letter's key, a wrong one another letter of the alphabet drawn from the same
    seed. Each answer comes after ``response_delay_s`` so the letter can be seen; a letter's answer
    not given within the protocol's ``response_timeout_s`` times out, as a real patient's would. The
    real Escape key still pauses the session when ``keyboard`` (a :class:`KeyboardSource`) is given.
    """

    def __init__(
        self,
        patient_settings: dict,
        alphabet: str,
        seed: int,
        response_delay_s: float = 0.0,
        keyboard: KeyboardSource | None = None,
        pause_key: str = "escape",
        confirm_key: str = "space",
    ):
        self.patient_settings = dict(patient_settings)
        self.alphabet = alphabet
        self.seed = int(seed)
        self.response_delay_s = float(response_delay_s)
        self.keyboard = keyboard
        self.pause_key = pause_key
        self.confirm_key = confirm_key
        self._answer_due: tuple[object, float] | None = None  # (trial, perf_counter time of its answer)

    def start_timer(self) -> None:
        pass

    def patient(self, index: int):
        return SimulatedPatient(
            **self.patient_settings,
            n_alternatives=len(self.alphabet),
            seed=np.random.SeedSequence([self.seed, index, 1]),
        )

    def answer(self, trial, letter: str, index: int) -> str:
        """The key the patient presses for ``letter`` shown with ``trial`` at trial ``index``."""
        correct = letters.MODE.respond(self.patient(index), trial)
        if correct:
            return letter_key(letter)
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, index, 2]))
        others = [c for c in self.alphabet if c != letter]
        return letter_key(others[int(rng.integers(len(others)))])

    def _look(self, seconds: float) -> KeyPress | None:
        """Wait ``seconds`` (keeping the window responsive); return Escape if it was pressed."""
        if self.keyboard is not None:
            return self.keyboard.wait_keys([self.pause_key], max(seconds, 0.0))
        if seconds > 0:
            time.sleep(seconds)
        return None

    def letter_response(self, trial, letter, keys, timeout_s=None, index=0):
        """The patient's key ``response_delay_s`` after the letter appeared, or None (timed out, as a
        real patient's answer) when ``timeout_s`` runs out first. The loop asks again for the rest of
        the protocol's timeout when it hides the letter after ``letter_s``: the patient's time runs
        on from the letter's onset (the same ``trial``); after a pause it starts anew."""
        if self.keyboard is not None:
            self.keyboard.start_timer()
        now = time.perf_counter()
        if self._answer_due is None or self._answer_due[0] is not trial:
            self._answer_due = (trial, now + self.response_delay_s)
        left = max(self._answer_due[1] - now, 0.0)
        timed_out = timeout_s is not None and timeout_s < left
        pause = self._look(timeout_s if timed_out else left)
        if pause is not None or not timed_out:
            self._answer_due = None  # answered, or shown again after the pause
        if pause is not None:
            return pause
        if timed_out:
            return None
        return KeyPress(self.answer(trial, letter, index), self.response_delay_s)

    def wait_for(self, keys, timeout_s=None):
        """Instructions, prompts and breaks: press the confirm key (or the first key offered)."""
        if self.keyboard is not None:
            self.keyboard.start_timer()
        pause = self._look(self.response_delay_s)
        if pause is not None and pause.key in keys:
            return pause
        key = self.confirm_key if self.confirm_key in keys else next(iter(keys))
        return KeyPress(key, self.response_delay_s)

    def clear(self) -> None:
        if self.keyboard is not None:
            self.keyboard.clear()

    @property
    def human(self):
        """Who answers the pause screen: the real keyboard if there is one, else this source."""
        return self.keyboard if self.keyboard is not None else self


class SimulatedDuelSource(SimulatedSource):
    """A simulated patient answers duels: lens 1, lens 2, or "the same".

    The patient of trial ``index`` (seeded from ``(seed, index)``, as for letters) draws its answer
    with :meth:`~lensopt.observer.SimulatedPatient.duel_answer` (Gumbel-noisy utilities; "same"
    when they differ by less than ``tie_threshold``) and presses ``answer_keys[answer]``
    (``{"first": "1", "second": "2", "same": "s"}``). Escape pauses as in :class:`SimulatedSource`.
    """

    def __init__(
        self,
        patient_settings: dict,
        alphabet: str,
        seed: int,
        answer_keys: dict[str, str],
        tie_threshold: float = 0.0,
        **options,
    ):
        super().__init__(patient_settings, alphabet, seed, **options)
        self.answer_keys = dict(answer_keys)
        self.tie_threshold = float(tie_threshold)

    def duel_answer(self, trial, index: int) -> str:
        """``"first"``, ``"second"`` or ``"same"``: the patient's answer to ``trial`` at trial ``index``."""
        return duels.MODE.respond(self.patient(index), trial, tie_threshold=self.tie_threshold)

    def duel_response(self, trial, letters, keys, timeout_s=None, index=0):
        if self.keyboard is not None:
            self.keyboard.start_timer()
        pause = self._look(self.response_delay_s)
        if pause is not None:
            return pause
        return KeyPress(self.answer_keys[self.duel_answer(trial, index)], self.response_delay_s)


class SimulatedRankingSource(SimulatedSource):
    """A simulated patient ranks the lenses, clearest first, pressing one lens key after another.

    The patient of trial ``index`` (seeded from ``(seed, index)``, as for letters) draws its order with
    :meth:`~lensopt.observer.SimulatedPatient.rank_lenses` (a Plackett–Luce draw: Gumbel-noisy
    utilities sorted); each call presses the key (``lens_keys[i]`` for lens ``i``) of the clearest
    lens not yet ``given``, ``response_delay_s`` after the previous one. Escape pauses as in
    :class:`SimulatedSource`.
    """

    def __init__(self, patient_settings: dict, alphabet: str, seed: int, lens_keys, **options):
        super().__init__(patient_settings, alphabet, seed, **options)
        self.lens_keys = tuple(lens_keys)

    def order(self, trial, index: int) -> tuple[int, ...]:
        """Every lens index of ``trial``, clearest first: the patient's order at trial ``index``."""
        return rankings.MODE.respond(self.patient(index), trial)

    def ranking_response(self, trial, letters, keys, timeout_s=None, index=0, given=()):
        if self.keyboard is not None:
            self.keyboard.start_timer()
        pause = self._look(self.response_delay_s)
        if pause is not None:
            return pause
        lens = next(i for i in self.order(trial, index) if i not in given)
        return KeyPress(self.lens_keys[lens], self.response_delay_s * (len(given) + 1))
