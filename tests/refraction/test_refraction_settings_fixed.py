"""The settings of every refraction optimizer are fixed when it is made: an assignment is refused in
one line saying how to get another value (a new optimizer), rather than changing an attribute that
the model ignores and the saved state writes all the same; the seed is any integer, kept as an int."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lensopt.refraction.acuity_law import AcuityLawOptimizer
from lensopt.refraction.duels import DuelRefractionOptimizer
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.refraction.rankings import RankingRefractionOptimizer
from lensopt.stopping import StopRule

START = "-1.00 / -0.50 x 180"
OPTIMIZERS = {
    "refraction": lambda **kw: RefractionOptimizer(**kw),
    "acuity-law": lambda **kw: AcuityLawOptimizer(**kw),
    "prescription": lambda **kw: PrescriptionOptimizer(start=START, **kw),
    "duel": lambda **kw: DuelRefractionOptimizer(**kw),
    "ranking": lambda **kw: RankingRefractionOptimizer(**kw),
    "prescription-duel": lambda **kw: PrescriptionDuelOptimizer(start=START, **kw),
    "prescription-ranking": lambda **kw: PrescriptionRankingOptimizer(start=START, **kw),
}


def _refused(optimizer, name, value) -> str:
    """The one line refusing ``optimizer.name = value`` (and ``del optimizer.name``)."""
    with pytest.raises(AttributeError) as error:
        setattr(optimizer, name, value)
    with pytest.raises(AttributeError, match=rf"^{type(optimizer).__name__}\.{name} "):
        delattr(optimizer, name)
    message = str(error.value)
    assert message.startswith(f"{type(optimizer).__name__}.{name} ") and "fixed when the optimizer is made" in message
    return message


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_every_setting_of_a_made_optimizer_is_refused_naming_the_way_to_another_value(kind):
    optimizer = OPTIMIZERS[kind](seed=1)
    state = json.loads(json.dumps(optimizer.to_state()))
    cls = type(optimizer).__name__
    for name, value in optimizer.settings_dict().items():
        message = _refused(optimizer, name, value)
        assert "\n" not in message
        assert message.endswith(
            f"{cls}.from_settings({{**optimizer.settings_dict(), {name!r}: value}}, optimizer.history)"
        )
    for name in ("settings", "seed", "rule"):  # what holds them, and the two every optimizer names
        _refused(optimizer, name, getattr(optimizer, name, None))
    assert json.loads(json.dumps(optimizer.to_state())) == state  # nothing was changed


def test_a_changed_lapse_is_refused_and_an_optimizer_made_with_it_keeps_the_history_and_uses_it():
    optimizer = RefractionOptimizer(seed=3, n_initial=2)
    for _ in range(3):
        optimizer.tell(optimizer.ask(), True)
    for name, value in (("lapse", 0.3), ("n_alternatives", 2), ("stop", StopRule()), ("seed", 99)):
        _refused(optimizer, name, value)
    assert optimizer.lapse == 0.02 and optimizer.n_alternatives == 26 and optimizer.stop is None
    assert optimizer.seed == 3
    rebuilt, live = RefractionOptimizer.from_state(optimizer.to_state()).ask(), optimizer.ask()
    for name in ("sphere_d", "cylinder_d", "letter_logmar"):  # a cold fit against a warm one (lensopt.asktell)
        assert getattr(rebuilt, name) == pytest.approx(getattr(live, name), abs=1e-7)
    # the way the message names: a new optimizer with the other value, told the same history
    rule = StopRule(confidence=0.9, min_trials=4, max_trials=50)
    changed = RefractionOptimizer.from_settings(
        {**optimizer.settings_dict(), "lapse": 0.3, "stop": rule}, optimizer.history
    )
    assert changed.history == optimizer.history and changed.stop == rule
    assert changed.lapse == changed.settings.lapse_rate == changed.to_state()["settings"]["lapse"] == 0.3


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_a_numpy_integer_seed_is_accepted_and_kept_as_an_int_in_the_saved_state(kind):
    for seed in np.arange(2, 4):
        optimizer = OPTIMIZERS[kind](seed=seed)
        assert type(optimizer.seed) is int and optimizer.seed == seed
        settings = optimizer.to_state()["settings"]
        assert type(settings["seed"]) is int and json.loads(json.dumps(settings))["seed"] == seed


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_a_random_generator_for_a_seed_is_refused_saying_the_seed_is_recorded(kind):
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, got a Generator: the seed is recorded"):
        OPTIMIZERS[kind](seed=np.random.default_rng(0))
    for seed in (True, -1, 2.5, "3", None):
        with pytest.raises(ValueError, match=r"^seed must be an integer >= 0"):
            OPTIMIZERS[kind](seed=seed)


def test_a_users_subclass_keeps_its_own_attributes_changeable_and_lensopts_settings_fixed():
    """Only lensopt's settings are fixed: a script's subclass with a parameter of its own (a label,
    a callback) could not change it after construction, told it was a setting in the saved state."""
    from lensopt.refraction import AcuityLawOptimizer, RefractionOptimizer

    for base in (RefractionOptimizer, AcuityLawOptimizer):

        class Tagged(base):
            def __init__(self, tag=None, **settings):
                super().__init__(**settings)
                self.tag = tag

        optimizer = Tagged(tag="first", seed=1)
        optimizer.tag = "second"
        assert optimizer.tag == "second"
        with pytest.raises(AttributeError, match="is a setting, fixed when the optimizer is made"):
            optimizer.seed = 2
