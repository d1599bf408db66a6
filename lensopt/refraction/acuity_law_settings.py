"""What a session of the acuity-law optimizer (:mod:`lensopt.refraction.acuity_law`) depends on:
its rule name, the letter mode's options it takes, its prior's ranges and its settings
(:class:`AcuityLawSettings`, saved with its state and validated here)."""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass

from lensopt.binary.settings import check_seed
from lensopt.refraction.grid_posterior import check_bounds
from lensopt.refraction.phoropter import check_lens_step, check_room_for_lenses

#: Psychometric slopes (per logMAR) the prior allows, equally likely.
SLOPES_PER_LOGMAR = (2.0, 4.0, 8.0)
#: Range (logMAR) of the patient's best acuity ``VA₀`` the prior covers.
VA_BEST_RANGE_LOGMAR = (-0.3, 0.8)
#: Amplitudes of accommodation (D) the prior allows, equally likely: the law alone (an eye that does
#: not accommodate: presbyopic, or under cycloplegia), as every session before they were a setting.
NO_ACCOMMODATION_D = (0.0,)
#: The largest amplitude of accommodation a prior may hold (a child's, about 20 D).
MAX_ACCOMMODATION_D = 20.0
#: The rule name that selects this optimizer wherever a letter rule is chosen, and the options of the
#: letter mode it takes (the GP's kernel, inference and β do not apply).
ACUITY_LAW_RULE = "acuity-law"
ACUITY_LAW_OPTIONS = ("n_alternatives", "lapse", "stop", "accommodation_d")
#: What the lens of a search that allowed for accommodation is (the console and the record say it).
RELAXED_LENS = "the most plus of those it reads best through"


@dataclass(frozen=True)
class AcuityLawSettings:
    """Everything a session of :class:`AcuityLawOptimizer` depends on (saved with its state)."""

    seed: int = 0
    n_alternatives: int = 26
    lapse: float = 0.02
    slopes_per_logmar: tuple[float, ...] = SLOPES_PER_LOGMAR
    sphere_bounds_d: tuple[float, float] = (-4.0, 4.0)
    cylinder_bounds_d: tuple[float, float] = (-4.0, 4.0)
    letter_bounds_logmar: tuple[float, float] = (-1.0, 2.0)
    va_best_bounds_logmar: tuple[float, float] = VA_BEST_RANGE_LOGMAR
    lens_step_d: float | None = None
    #: Amplitudes of accommodation (D), equally likely a priori: an eye with ``A`` D reads as well
    #: through every lens up to ``A`` D too minus (in the spherical equivalent), so its acuity has a
    #: plateau on the minus side and its correction — the lens to prescribe — is the plateau's
    #: most-plus end. ``(0.0,)``: the law alone, said (an eye that does not accommodate: cyclopleged,
    #: presbyopic); None, not said: the law alone too (every session saved before the setting).
    accommodation_d: tuple[float, ...] | None = None
    rule: str = ACUITY_LAW_RULE
    #: The answer model, as the GP optimizer's settings name it (the dashboard reads it): always the
    #: floored probit ``γ + (1 − γ − λ) Φ``.
    likelihood: str = "floored"

    def __post_init__(self):
        object.__setattr__(self, "seed", check_seed(self.seed))
        n = self.n_alternatives
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
            raise ValueError(f"n_alternatives must be an integer >= 2, got {n!r}")
        object.__setattr__(self, "n_alternatives", int(n))  # a numpy integer's state was not JSON
        lapse = self.lapse
        if isinstance(lapse, bool) or not isinstance(lapse, numbers.Real) or not (0.0 < lapse < 0.5):
            raise ValueError(
                f"the acuity-law optimizer's lapse (--model-lapse, [optimizer] lapse) must be a rate in (0, 0.5), "
                f"e.g. 0.02 — above 0, since without lapses one slip of the patient's rules out their correction; "
                f"got {lapse!r}"
            )
        slopes = self.slopes_per_logmar
        if isinstance(slopes, numbers.Real) and not isinstance(slopes, bool):
            slopes = (slopes,)
        if (
            not isinstance(slopes, (list, tuple))
            or not slopes
            or not all(isinstance(a, numbers.Real) and not isinstance(a, bool) and 0 < a < math.inf for a in slopes)
        ):
            raise ValueError(f"slopes_per_logmar must be positive numbers (e.g. 2 4 8), got {self.slopes_per_logmar!r}")
        object.__setattr__(self, "slopes_per_logmar", tuple(float(a) for a in slopes))
        if self.accommodation_d is not None:
            object.__setattr__(self, "accommodation_d", accommodation_amplitudes(self.accommodation_d))
        for name in ("sphere_bounds_d", "cylinder_bounds_d", "letter_bounds_logmar", "va_best_bounds_logmar"):
            object.__setattr__(self, name, check_bounds(name, getattr(self, name)))
        object.__setattr__(self, "lens_step_d", check_lens_step(self.lens_step_d))
        check_room_for_lenses(1, self.lens_step_d, (self.sphere_bounds_d, self.cylinder_bounds_d), "a letter trial")
        if self.likelihood != "floored":
            raise ValueError(f"likelihood must be 'floored' (the only answer model here), got {self.likelihood!r}")
        if self.rule != ACUITY_LAW_RULE:
            raise ValueError(f"rule must be {ACUITY_LAW_RULE!r}, got {self.rule!r}")

    @property
    def amplitudes_d(self) -> tuple[float, ...]:
        """The amplitudes of accommodation the prior holds: :attr:`accommodation_d`, said or not."""
        return NO_ACCOMMODATION_D if self.accommodation_d is None else self.accommodation_d

    def to_dict(self) -> dict:
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
        if self.accommodation_d is None:  # not said: read as every state saved before the setting
            del data["accommodation_d"]
        return data


def accommodation_amplitudes(value) -> tuple[float, ...]:
    """``accommodation_d`` as a tuple of distinct amplitudes in [0, :data:`MAX_ACCOMMODATION_D`] D,
    ascending; one line naming the setting otherwise."""
    amplitudes = (value,) if isinstance(value, numbers.Real) and not isinstance(value, bool) else value
    if (
        not isinstance(amplitudes, (list, tuple))
        or not amplitudes
        or not all(
            isinstance(a, numbers.Real) and not isinstance(a, bool) and 0.0 <= float(a) <= MAX_ACCOMMODATION_D
            for a in amplitudes
        )
    ):
        raise ValueError(
            f"accommodation_d must be amplitudes of accommodation from 0 to {MAX_ACCOMMODATION_D:g} D "
            f"(e.g. [0, 2, 4, 8]; [0] for an eye that does not accommodate), got {value!r}"
        )
    return tuple(sorted({float(a) for a in amplitudes}))


def modelled_accommodation_d(settings) -> tuple[float, ...] | None:
    """The prior amplitudes of accommodation (D) a session's optimizer settings (``settings_dict()``, or
    as stored with the session) hold beyond the law alone; None for the law alone, for settings saved
    before the setting, for a GP rule's (which has none) and for a value no session could have run
    with. The record, the closing console and the dashboard say, with it, that the lens reported is the
    relaxed eye's."""
    amplitudes = _stored_amplitudes(settings)
    return None if amplitudes in (None, NO_ACCOMMODATION_D) else amplitudes


def said_not_to_accommodate(settings) -> bool:
    """Whether a session's optimizer settings (as :func:`modelled_accommodation_d` reads them) say the
    eye does not accommodate: ``accommodation_d = [0]`` written (a cyclopleged or presbyopic eye), not
    left out — whose lens of best acuity is then its most-plus lens."""
    return _stored_amplitudes(settings) == NO_ACCOMMODATION_D


def _stored_amplitudes(settings) -> tuple[float, ...] | None:
    """The amplitudes of accommodation written in optimizer ``settings`` (a dict), or None: left out
    (not said), not a dict, or a value no session could have run with."""
    value = settings.get("accommodation_d") if isinstance(settings, dict) else None
    try:
        return None if value is None else accommodation_amplitudes(value)
    except ValueError:
        return None


def accommodation_phrase(amplitudes_d: tuple[float, ...]) -> str:
    """``accommodation up to 8 D (0, 0.5, 1, 2, 4, 8 D)``: the amplitudes a session's model allowed."""
    return f"accommodation up to {max(amplitudes_d):g} D ({', '.join(f'{a:g}' for a in amplitudes_d)} D)"
