"""Settings fixed at construction (:class:`lensopt.binary.settings.FixedSettings`) and one check of
the seed (:func:`lensopt.binary.settings.check_seed`), for the model families' optimizers: the
contextual (0/1), preference (duels), Copeland and ranking optimizers."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from lensopt.binary.optimizer import ContextualOptimizer
from lensopt.binary.settings import FixedSettings, check_seed
from lensopt.preference import PreferenceOptimizer
from lensopt.preference.copeland import CopelandOptimizer
from lensopt.ranking import RankingOptimizer

OPTIMIZERS = {
    "contextual": lambda **kw: ContextualOptimizer(((0.0, 1.0),), ((0.0, 1.0),), **kw),
    "preference": lambda **kw: PreferenceOptimizer(((0.0, 1.0),), **kw),
    "copeland": lambda **kw: CopelandOptimizer(((0.0, 1.0),), **kw),
    "ranking": lambda **kw: RankingOptimizer(((0.0, 1.0),), **kw),
}


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_a_model_familys_settings_are_refused_after_construction_naming_the_way_to_another_value(kind):
    optimizer = OPTIMIZERS[kind](seed=1)
    state = optimizer.to_state()
    cls = type(optimizer).__name__
    for name in ("settings", *state["settings"], "kernel"):
        with pytest.raises(AttributeError) as error:
            setattr(optimizer, name, None)
        message = str(error.value)
        assert message.startswith(f"{cls}.{name} ") and "fixed when the optimizer is made" in message
        assert message.endswith(f"{cls}.from_state(state) with state['settings'] changed") and "\n" not in message
    assert optimizer.to_state() == state
    optimizer.last_decision_ms = 1.0  # what it records itself stays an attribute


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_a_model_familys_seed_may_be_a_numpy_integer_and_is_saved_as_an_int(kind):
    optimizer = OPTIMIZERS[kind](seed=np.int64(7))
    assert type(optimizer.settings.seed) is int and optimizer.settings.seed == 7
    assert json.loads(json.dumps(optimizer.to_state()))["settings"]["seed"] == 7


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_a_model_familys_seed_may_not_be_a_generator(kind):
    with pytest.raises(ValueError, match="the seed is recorded so that the session can be replayed"):
        OPTIMIZERS[kind](seed=np.random.default_rng(1))


def test_check_seed_takes_any_integer_as_an_int_and_refuses_the_rest_in_one_line():
    for seed in (0, 3, np.int64(3), np.uint8(3), np.arange(5)[3]):
        assert check_seed(seed) == int(seed) and type(check_seed(seed)) is int
    for generator in (np.random.default_rng(0), np.random.RandomState(0), np.random.SeedSequence(0), random.Random(0)):
        with pytest.raises(ValueError, match=rf"^seed must be an integer >= 0, got a {type(generator).__name__}: "):
            check_seed(generator)
    for seed in (True, -1, np.int64(-2), 3.0, "3", None, [3]):
        with pytest.raises(ValueError, match=r"^seed must be an integer >= 0 \(e\.g\. seed=3\), got "):
            check_seed(seed)


class _Made(FixedSettings):
    __module__ = "lensopt.binary.stand_in"  # fixed like lensopt's own classes (a user's subclass is not)

    def __init__(self, size, *, colour="red"):
        self.size, self.colour, self.count = size, colour, 0


class _Extended(_Made):
    __module__ = "lensopt.binary.stand_in"
    _settings_attributes = frozenset({"area"})

    def __init__(self, size, **kwargs):
        super().__init__(size, **kwargs)
        self.size = size + 1  # a subclass's __init__ still sets its settings after its base's
        self.area = self.size**2


def test_settings_are_set_freely_inside_every_init_of_the_hierarchy_and_refused_after():
    made = _Extended(2, colour="blue")
    assert (made.size, made.colour, made.area) == (3, "blue", 9)
    for name in ("size", "colour", "area", "settings"):
        with pytest.raises(AttributeError, match=rf"^_Extended\.{name} "):
            setattr(made, name, 1)
        with pytest.raises(AttributeError, match=rf"^_Extended\.{name} "):
            delattr(made, name)
    made.count = 1  # not a setting
    assert made.count == 1 and "_constructing" not in vars(made)


@pytest.mark.parametrize(
    ("make", "name", "setting", "listed"),
    [
        ("AcuityLawOptimizer", "beta", 2.0, "slopes_per_logmar"),
        ("RefractionOptimizer", "sphere_step", 0.25, "lens_step_d"),
        ("PrescriptionOptimizer", "axis_step", 5, "axis_step_deg"),
        ("ContextualOptimizer", "bogus", 1, "system_bounds"),
    ],
)
def test_a_setting_no_optimizer_takes_is_refused_naming_the_optimizer_made_and_its_settings(
    make, name, setting, listed
):
    """``AcuityLawOptimizer(beta=2)`` raised ``AcuityLawSettings.__init__() got an unexpected keyword
    argument 'beta'``, and ``RefractionOptimizer(foo=1)`` named ``OptimizerSettings``: classes the
    person never wrote. The message names the optimizer made and the settings it takes."""
    import lensopt.refraction as refraction

    cls = getattr(refraction, make, None) or ContextualOptimizer
    args = (((0.0, 1.0),), ((0.0, 1.0),)) if cls is ContextualOptimizer else ()
    with pytest.raises(TypeError) as refused:
        cls(*args, **{name: setting})
    message = str(refused.value)
    assert message.startswith(f"{make}() has no setting {name!r}; its settings: ")
    taken = message.split("its settings: ")[1].split(", ")
    assert listed in taken and "seed" in taken and taken == sorted(taken)
