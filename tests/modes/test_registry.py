"""The registry of feedback modes, and every dispatch table keyed by its kinds."""

from __future__ import annotations

import pytest

from lensopt.modes import duels, letters, rankings
from lensopt.modes.base import FeedbackMode
from lensopt.modes.registry import KINDS, get_mode, registry


def test_the_registry_lists_the_three_kinds_in_order():
    assert tuple(registry) == KINDS == ("letters", "duel", "ranking")
    assert [registry[k] for k in KINDS] == [letters.MODE, duels.MODE, rankings.MODE]
    for kind, mode in registry.items():
        assert isinstance(mode, FeedbackMode) and mode.kind == kind and get_mode(kind) is mode


def test_the_registry_is_read_only_and_its_modes_frozen():
    with pytest.raises(TypeError, match="does not support item assignment"):
        registry["other"] = letters.MODE  # type: ignore[index]
    with pytest.raises(AttributeError, match="cannot assign to field 'kind'"):
        letters.MODE.kind = "other"  # type: ignore[misc]


@pytest.mark.parametrize("kind", ["lines", "", "Letters", None, 3])
def test_an_unknown_kind_is_a_one_line_error_naming_the_known_kinds(kind):
    with pytest.raises(ValueError) as error:
        get_mode(kind)
    message = str(error.value)
    assert "\n" not in message and repr(kind) in message
    assert message.endswith("the known kinds are letters, duel, ranking")


def test_every_mode_declares_an_ask_tell_optimizer_and_options_it_takes():
    import inspect

    for mode in registry.values():
        assert all(hasattr(mode.optimizer_class, name) for name in ("ask", "tell", "best", "to_state"))
        assert callable(mode.optimizer_class.from_settings)
        parameters = inspect.signature(mode.optimizer_class).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
        assert takes_any or set(mode.option_names) <= set(parameters), mode.kind
        assert mode.optimizer_options({"unknown": 1, **dict.fromkeys(mode.option_names, 0)}) == dict.fromkeys(
            mode.option_names, 0
        )


def test_a_responder_refuses_options_its_mode_does_not_take():
    with pytest.raises(ValueError, match="tie_threshold do not apply to letters feedback"):
        letters.MODE.responder(object(), tie_threshold=1.0)


def test_duel_answers_are_defined_once():
    import lensopt.experiment.protocol_sections
    import lensopt.refraction.duels
    import lensopt.refraction.trial
    import lensopt.store.records

    answers = lensopt.refraction.trial.DUEL_ANSWERS
    assert duels.MODE.answers is answers
    assert lensopt.refraction.duels.DUEL_ANSWERS is answers
    assert lensopt.store.records.DUEL_ANSWERS is answers
    assert lensopt.experiment.protocol_sections.DUEL_ANSWER_KEYS is answers


# --- the dispatch tables of the layers above: exactly the registry's kinds ----------------------


def test_the_store_keeps_a_table_for_exactly_the_registrys_kinds():
    from lensopt.store.records import KINDS as STORE_KINDS
    from lensopt.store.schema import TRIAL_TABLES

    assert STORE_KINDS == KINDS and tuple(TRIAL_TABLES) == KINDS


def test_the_simulate_command_covers_exactly_the_registrys_kinds():
    from lensopt.cli import simulate

    assert simulate.FEEDBACK_MODES == KINDS
    assert set(simulate.DEFAULT_INFERENCE) == set(KINDS)
    assert {key[0] if isinstance(key, tuple) else key for key in simulate.DEFAULT_RULES} == set(KINDS)


def test_the_experiment_has_a_mode_for_exactly_the_registrys_kinds():
    from lensopt.experiment.modes import MODES, Mode
    from lensopt.experiment.protocol_sections import FEEDBACK_MODES

    assert tuple(MODES) == KINDS
    assert FEEDBACK_MODES == KINDS
    for kind, mode in MODES.items():
        assert mode.feedback is registry[kind] and mode.kind == kind
        assert mode.optimizer_class is registry[kind].optimizer_class
        # the user interface parts are the mode's own, not the base class's placeholders
        assert type(mode).simulated_source is not Mode.simulated_source and type(mode).loop is not Mode.loop


def test_the_dashboard_has_a_model_for_exactly_the_registrys_kinds():
    from lensopt.dashboard.comparison_model import ComparisonSessionModel
    from lensopt.dashboard.model import SESSION_MODELS

    assert tuple(SESSION_MODELS) == KINDS
    for kind, model in SESSION_MODELS.items():
        assert model.feedback is registry[kind] and model.kind == kind
        assert issubclass(model, ComparisonSessionModel) == registry[kind].comparison, kind


def test_a_stored_session_runs_with_the_settings_its_creation_time_tells():
    """``session_settings`` gives a full-prescription comparison that stored no trust centre the one
    it was created with (tilted before 27 Nov 2026 13:11:51 UTC, the mean since; a duel's report
    with the whole tilt before, half since); what a session stored, and other sessions, as stored."""
    from types import SimpleNamespace

    from lensopt.modes.registry import session_settings
    from lensopt.refraction.trust_centre_history import MEAN_TRUST_CENTRE_SINCE_S

    old = {"search": "prescription", "rule": "muc-ald", "seed": 3}

    def ran(kind, settings, created_at_s):
        return session_settings(SimpleNamespace(kind=kind, optimizer_settings=settings, created_at=created_at_s))

    before, since = MEAN_TRUST_CENTRE_SINCE_S - 1, MEAN_TRUST_CENTRE_SINCE_S
    assert ran("duel", old, before) == {**old, "trust_centre": "tilted", "report_tilt_share": 1.0}
    assert ran("duel", old, since) == {**old, "trust_centre": "mean", "report_tilt_share": 0.5}
    assert ran("ranking", old, before) == {**old, "trust_centre": "tilted"}
    assert ran("ranking", old, since + 3 * 3600) == {**old, "trust_centre": "mean"}
    # created later by an older lensopt installed still: its settings, without the prior about the
    # start, say it predates the mean; with the prior (a lensopt of 27–30 Nov), the mean
    later = since + 10 * 86400
    assert ran("duel", old, later) == {**old, "trust_centre": "tilted", "report_tilt_share": 1.0}
    assert ran("ranking", {**old, "start_prior_depth": 4.0}, later)["trust_centre"] == "mean"
    stored = {**old, "trust_centre": "tilted", "report_tilt_share": 0.75}
    assert ran("duel", stored, since) == stored
    for kind, two_parameter in (("duel", {"rule": "muc-ald", "seed": 3}), ("letters", old), ("ranking", {"seed": 3})):
        assert ran(kind, two_parameter, before) == two_parameter
    assert ran("duel", old, before) is not old and "trust_centre" not in old  # the stored dict untouched


def _seven_optimizers():
    from lensopt.refraction import (
        AcuityLawOptimizer,
        DuelRefractionOptimizer,
        PrescriptionDuelOptimizer,
        PrescriptionOptimizer,
        PrescriptionRankingOptimizer,
        RankingRefractionOptimizer,
        RefractionOptimizer,
    )

    start = "-1.00 / -0.50 x 180"
    return [
        RefractionOptimizer(seed=3),
        AcuityLawOptimizer(seed=3),
        PrescriptionOptimizer(start=start, seed=3),
        DuelRefractionOptimizer(seed=3),
        PrescriptionDuelOptimizer(start=start, seed=3),
        RankingRefractionOptimizer(seed=3),
        PrescriptionRankingOptimizer(start=start, seed=3),
    ]


KIND_OF = {
    "RefractionOptimizer": "letters",
    "AcuityLawOptimizer": "letters",
    "PrescriptionOptimizer": "letters",
    "DuelRefractionOptimizer": "duel",
    "PrescriptionDuelOptimizer": "duel",
    "RankingRefractionOptimizer": "ranking",
    "PrescriptionRankingOptimizer": "ranking",
}


@pytest.mark.parametrize("optimizer", _seven_optimizers(), ids=lambda o: type(o).__name__)
def test_a_saved_state_is_loaded_by_its_format_whichever_optimizer_wrote_it(optimizer):
    """A script that saved ``to_state()`` to JSON gets its optimizer back without having stored the
    class beside it: the same class, the same history, the same next query."""
    import json

    from lensopt.modes.registry import load_state
    from lensopt.observer import SimulatedPatient

    respond = get_mode(KIND_OF[type(optimizer).__name__]).responder(SimulatedPatient(-1.25, -0.5, axis_deg=170, seed=2))
    for _ in range(4):
        query = optimizer.ask()
        optimizer.tell(query, respond(query))
    loaded = load_state(json.loads(json.dumps(optimizer.to_state())))
    assert type(loaded) is type(optimizer) and loaded.n_trials == optimizer.n_trials == 4
    assert loaded.ask() == optimizer.ask()


@pytest.mark.parametrize("state", [{"format": "lensopt.bench-run/1"}, {}, [], "lensopt.refraction-state/1"])
def test_a_state_of_no_refraction_optimizer_is_refused_in_one_line_listing_the_formats(state):
    from lensopt.modes.registry import load_state

    with pytest.raises(ValueError) as refused:
        load_state(state)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("not a saved lensopt optimizer state")
    assert "lensopt.acuity-law-state/1" in message


def test_the_kind_of_an_optimizer_is_the_mode_that_rebuilds_it_from_its_settings():
    from lensopt.binary.optimizer import ContextualOptimizer
    from lensopt.modes.registry import feedback_kind
    from lensopt.refraction import (
        AcuityLawOptimizer,
        DuelRefractionOptimizer,
        RankingRefractionOptimizer,
        RefractionOptimizer,
    )
    from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
    from lensopt.refraction.prescription_letters import PrescriptionOptimizer
    from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer

    start = "-1.00 / -0.50 x 180"
    kinds = {
        RefractionOptimizer(seed=1): "letters",
        AcuityLawOptimizer(seed=1): "letters",
        PrescriptionOptimizer(start=start, seed=1): "letters",
        DuelRefractionOptimizer(seed=1): "duel",
        PrescriptionDuelOptimizer(start=start, seed=1): "duel",
        RankingRefractionOptimizer(seed=1): "ranking",
        PrescriptionRankingOptimizer(start=start, seed=1): "ranking",
    }
    for optimizer, kind in kinds.items():
        assert feedback_kind(optimizer) == kind, type(optimizer).__name__
        mode = get_mode(kind)
        assert type(optimizer) is mode.stored_optimizer_class(optimizer.settings_dict())
    assert feedback_kind(ContextualOptimizer(((-4.0, 4.0),), ((-1.0, 2.0),), rule="random")) is None


def _model_family_optimizers():
    """The model families' own optimizers, each with an answer to any of its queries."""
    from lensopt.binary.optimizer import ContextualOptimizer
    from lensopt.preference.copeland import CopelandOptimizer
    from lensopt.preference.optimizer import PreferenceOptimizer
    from lensopt.ranking.optimizer import RankingOptimizer

    box = [(-1.0, 1.0)]
    return [
        (ContextualOptimizer(box, [(0.0, 1.0)], seed=3, n_initial=2), lambda q: bool(q.point.sum() > 0)),
        (PreferenceOptimizer(box, seed=3, n_initial=2), lambda q: int(q.members[0, 0] > q.members[1, 0])),
        (CopelandOptimizer(box, seed=3, n_initial=2), lambda q: bool(q.members[0, 0] > q.members[1, 0])),
        (RankingOptimizer(box, set_size=3, seed=3, n_initial=2), lambda q: int(q.members[:, 0].argmax())),
    ]


@pytest.mark.parametrize("optimizer, answer", _model_family_optimizers(), ids=lambda o: type(o).__name__)
def test_a_model_familys_saved_state_is_loaded_by_its_format_too(optimizer, answer):
    """``load_state`` serves every optimizer that saves a state, not only the refraction ones: the
    contextual binary optimizer on any box (its own ``from_state`` read it, ``load_state`` refused
    it), and the benchmark-level duel, Copeland and ranking optimizers."""
    import json

    from lensopt.modes.registry import load_state

    for _ in range(4):
        query = optimizer.ask()
        optimizer.tell(query, answer(query))
    loaded = load_state(json.loads(json.dumps(optimizer.to_state())))
    assert type(loaded) is type(optimizer) and loaded.n_trials == optimizer.n_trials == 4
    assert repr(loaded.ask()) == repr(optimizer.ask())
