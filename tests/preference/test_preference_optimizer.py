"""The preferential rules behind ask/tell: what each proposes, checked against brute force."""

import json

import numpy as np
import pytest
from scipy.stats import norm

from lensopt.gp.kernels import SquaredExponential
from lensopt.preference import (
    BATCH_RULES,
    CONTEXTUAL_RULES,
    DUEL_RULES,
    DuelQuery,
    PreferenceOptimizer,
    duel_inputs,
)
from lensopt.ranking import RankingOptimizer
from tests.preference.conftest import bump


def _answer(query, rng, utility=bump):
    """Probit answers of a bump utility; a context multiplies the utility difference."""
    scale = query.context[0] if query.context.size else 1.0
    members = query.members
    if len(members) == 2:
        return int(rng.uniform() < norm.cdf(scale * (utility(members[0]) - utility(members[1]))[0]))
    return [
        ((i, j), int(rng.uniform() < norm.cdf(scale * (utility(members[i]) - utility(members[j]))[0])))
        for i, j in query.pairs
    ]


def _run(optimizer, n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        query = optimizer.ask()
        optimizer.tell(query, _answer(query, rng))
    return optimizer


def _in_box(values, bounds):
    bounds = np.array(bounds, dtype=float)
    return np.all((values >= bounds[:, 0] - 1e-12) & (values <= bounds[:, 1] + 1e-12))


@pytest.mark.parametrize("rule", DUEL_RULES)
def test_every_duel_rule_proposes_two_distinct_members_inside_the_bounds(rule):
    bounds = [(-1.0, 2.0), (0.0, 1.0)]
    optimizer = PreferenceOptimizer(bounds, rule=rule, seed=1, n_initial=4)
    _run(optimizer, 8)
    query = optimizer.ask()
    assert query.members.shape == (2, 2) and query.context.shape == (0,)
    assert _in_box(query.members, bounds)
    assert not np.allclose(query.members[0], query.members[1])


@pytest.mark.parametrize("rule", CONTEXTUAL_RULES)
def test_every_contextual_rule_proposes_a_context_and_members_inside_the_bounds(rule):
    optimizer = PreferenceOptimizer([(0.0, 1.0)] * 2, context_bounds=[(0.2, 1.0)], rule=rule, seed=2, n_initial=4)
    _run(optimizer, 8)
    query = optimizer.ask()
    assert query.context.shape == (1,) and 0.2 <= query.context[0] <= 1.0
    assert query.members.shape == (2, 2) and _in_box(query.members, [(0.0, 1.0)] * 2)


def test_muc_challenger_maximizes_the_duel_epistemic_variance_against_the_champion():
    optimizer = _run(PreferenceOptimizer([(0.0, 1.0)], rule="muc", seed=3, n_initial=5), 15)
    query = optimizer.ask()
    champion, challenger = query.members
    np.testing.assert_allclose(champion, optimizer.best(), atol=1e-9)
    grid = np.linspace(0, 1, 4001)[:, None]
    variance = optimizer.model.duel_epistemic_variance(duel_inputs(np.zeros(0), champion, grid))
    chosen = optimizer.model.duel_epistemic_variance(duel_inputs(np.zeros(0), champion, challenger))[0]
    assert chosen >= variance.max() * (1 - 1e-6)


def test_champion_is_the_posterior_mean_argmax_on_a_grid():
    optimizer = _run(PreferenceOptimizer([(0.0, 1.0)], rule="muc", seed=4), 20)
    grid = np.linspace(0, 1, 4001)[:, None]
    mean, _ = optimizer.model.predict_utility(grid)
    best = optimizer.model.predict_utility(optimizer.best()[None])[0][0]
    assert best >= mean.max() - 1e-6


@pytest.mark.parametrize("rule", BATCH_RULES)
def test_batches_never_repeat_a_member(rule):
    context = () if rule in DUEL_RULES else [(0.2, 1.0)]
    optimizer = PreferenceOptimizer([(0.0, 1.0)], context_bounds=context, rule=rule, seed=5, batch_size=4, n_initial=2)
    for _ in range(6):
        query = optimizer.ask()
        gaps = np.abs(query.members[:, None, 0] - query.members[None, :, 0])[np.triu_indices(4, 1)]
        assert query.members.shape == (4, 1) and gaps.min() > 1e-3
        optimizer.tell(query, _answer(query, np.random.default_rng(optimizer.n_trials)))
    assert optimizer.n_trials == 6 * 6  # every pair of every batch is a duel


def test_batch_muc_challengers_spread_against_each_other():
    optimizer = _run(PreferenceOptimizer([(0.0, 1.0)], rule="muc", seed=6, batch_size=3), 10)
    query = optimizer.ask()
    from lensopt.preference.acquisition import ChallengeVariance

    total = sum(
        optimizer.model.duel_epistemic_variance(duel_inputs(np.zeros(0), query.members[i], query.members[j]))[0]
        for i, j in query.pairs
    )
    # no random batch with the same champion does better than the chosen one
    rng = np.random.default_rng(0)
    for _ in range(200):
        others = rng.uniform(0, 1, (2, 1))
        members = np.vstack([query.members[:1], others])
        alternative = sum(
            optimizer.model.duel_epistemic_variance(duel_inputs(np.zeros(0), members[i], members[j]))[0]
            for i, j in [(0, 1), (0, 2), (1, 2)]
        )
        assert alternative <= total + 1e-9
    assert ChallengeVariance(optimizer.model, np.zeros(0), query.members[:1])(query.members[1:2])[0] > 0


@pytest.mark.parametrize("rule", ["muc", "kss", "duel-ts", "bivariate-ei"])
def test_same_seed_and_history_give_the_same_next_query_after_a_json_round_trip(rule):
    optimizer = _run(PreferenceOptimizer([(0.0, 1.0)] * 2, rule=rule, seed=7), 9)
    rebuilt = PreferenceOptimizer.from_state(json.loads(json.dumps(optimizer.to_state())))
    a, b = optimizer.ask(), rebuilt.ask()
    np.testing.assert_allclose(a.members, b.members, rtol=0, atol=1e-9)
    np.testing.assert_allclose(rebuilt.best(), optimizer.best(), atol=1e-9)


def test_contextual_state_round_trip_keeps_the_context_rule():
    optimizer = _run(PreferenceOptimizer([(0.0, 1.0)], context_bounds=[(0.2, 1.0)], rule="muc-ald", seed=8), 8)
    rebuilt = PreferenceOptimizer.from_state(json.loads(json.dumps(optimizer.to_state())))
    a, b = optimizer.ask(), rebuilt.ask()
    np.testing.assert_allclose(a.context, b.context, atol=1e-9)
    np.testing.assert_allclose(a.members, b.members, atol=1e-9)


def test_muc_finds_the_optimum_of_a_bump_better_than_random_duels():
    errors = {}
    for rule in ("muc", "random"):
        errors[rule] = [
            abs(_run(PreferenceOptimizer([(0.0, 1.0)], rule=rule, seed=s), 25, seed=s).best()[0] - 0.3)
            for s in range(6)
        ]
    assert np.median(errors["muc"]) < 0.05
    assert np.median(errors["muc"]) < np.median(errors["random"])


def test_answers_of_the_wrong_form_are_refused_and_nothing_is_recorded():
    optimizer = PreferenceOptimizer([(0.0, 1.0)], rule="muc", seed=0, batch_size=3)
    query = optimizer.ask()
    for bad, said in (
        (2, r"needs a sequence of \(\(i, j\), c\) comparisons as outcome; got 2"),
        ("yes", r"needs a sequence of \(\(i, j\), c\) comparisons as outcome; got 'yes'"),
        ([((0, 0), 1)], r"comparison \(0, 0\) needs two different member indices"),
        ([((0, 5), 1)], r"comparison \(0, 5\) needs two different member indices"),
        ([((0, 1), 0.5)], r"comparison \(0, 1\) must be 0/1 or a bool"),
        ([], "outcome lists no comparison"),
    ):
        with pytest.raises(ValueError, match=said):
            optimizer.tell(query, bad)
    assert optimizer.n_trials == 0
    with pytest.raises(ValueError, match="outside"):
        optimizer.tell(DuelQuery(context=[], members=[[1.5], [0.2]]), 1)
    with pytest.raises(ValueError, match=r"members must be a 2-D array \(m >= 2, n_system\)"):
        DuelQuery(context=[], members=[[0.1]])


@pytest.mark.parametrize("inference", ["laplace", "ep"])
def test_a_same_answer_alone_leaves_the_duel_a_gaussian_of_precision_prior_plus_four_over_pi(inference):
    """Told "the same" once, the duel value ``g`` of that duel has (Laplace) posterior mean 0 and
    variance ``1 / (1 / k_g + 4 / π)``: the likelihood ``Φ(g) Φ(−g)`` is even, and ``−∂² log`` of it
    at 0 is ``2 (φ(0) / Φ(0))² = 4 / π`` (by hand; checked here also by finite differences). EP
    reaches the fixed point of a scalar EP written out here (two probit sites on one latent, the
    tilted moments in closed form), a little wider than the exact posterior (quadrature)."""
    h = 1e-4
    log_lik = lambda g: norm.logcdf(g) + norm.logcdf(-g)  # noqa: E731
    curvature = -(log_lik(h) - 2 * log_lik(0.0) + log_lik(-h)) / h**2
    assert curvature == pytest.approx(4 / np.pi, rel=1e-6)
    optimizer = PreferenceOptimizer([(0.0, 1.0)], rule="muc", seed=0, inference=inference)
    query = DuelQuery(context=[], members=[[0.2], [0.7]])
    optimizer.tell_same(query)
    assert optimizer.n_trials == 2 and list(optimizer.outcomes) == [1, 0]
    Z = duel_inputs(np.empty(0), np.array([0.2]), np.array([0.7]))
    mean, var = optimizer.model.predict_duel(Z)
    k_g = optimizer.model.kernel(Z)[0, 0]
    if inference == "laplace":
        assert mean[0] == pytest.approx(0.0, abs=1e-9)
        assert var[0] == pytest.approx(1.0 / (1.0 / k_g + 4.0 / np.pi), rel=1e-6)
    else:
        site_precision, site_shift = np.zeros(2), np.zeros(2)  # natural parameters of the two sites
        for _ in range(200):
            for i, y in enumerate((1.0, -1.0)):
                post_var = 1.0 / (1.0 / k_g + site_precision.sum())
                post_mean = post_var * site_shift.sum()
                cav_var = 1.0 / (1.0 / post_var - site_precision[i])
                cav_mean = cav_var * (post_mean / post_var - site_shift[i])
                z = y * cav_mean / np.sqrt(1.0 + cav_var)
                ratio = norm.pdf(z) / norm.cdf(z)
                tilt_mean = cav_mean + y * cav_var * ratio / np.sqrt(1.0 + cav_var)
                tilt_var = cav_var - cav_var**2 * ratio * (z + ratio) / (1.0 + cav_var)
                site_precision[i] = 1.0 / tilt_var - 1.0 / cav_var
                site_shift[i] = tilt_mean / tilt_var - cav_mean / cav_var
        ep_var = 1.0 / (1.0 / k_g + site_precision.sum())
        assert mean[0] == pytest.approx(0.0, abs=1e-6)
        assert var[0] == pytest.approx(ep_var, rel=1e-6)
        g = np.linspace(-12, 12, 200_001) * np.sqrt(k_g)
        density = np.exp(log_lik(g) - 0.5 * g**2 / k_g)
        exact_var = np.trapezoid(g**2 * density, g) / np.trapezoid(density, g)
        assert exact_var < var[0] < 1.02 * exact_var


def test_a_same_answer_needs_a_query_of_two_members_inside_the_bounds():
    optimizer = PreferenceOptimizer([(0.0, 1.0)], rule="muc", seed=0, batch_size=3)
    with pytest.raises(ValueError, match="'the same' answers a query of 2 members; this one has 3"):
        optimizer.tell_same(DuelQuery(context=[], members=[[0.1], [0.2], [0.3]]))
    with pytest.raises(ValueError, match="outside"):
        optimizer.tell_same(DuelQuery(context=[], members=[[1.5], [0.2]]))
    with pytest.raises(ValueError, match="DuelQuery"):
        optimizer.tell_same([[0.1], [0.2]])
    assert optimizer.n_trials == 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"rule": "nope"}, "unknown rule"),
        ({"rule": "muc-ald"}, "not available"),
        ({"rule": "dueling-ucb", "batch_size": 3}, "duels only"),
        ({"inference": "vi"}, "inference"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_settings_name_the_problem(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PreferenceOptimizer([(0.0, 1.0)], **kwargs)


def test_a_state_of_another_format_is_refused():
    with pytest.raises(ValueError, match="preference optimizer state"):
        PreferenceOptimizer.from_state({"format": "something-else"})


@pytest.mark.parametrize("optimizer_class", [PreferenceOptimizer, RankingOptimizer])
def test_a_given_kernel_is_saved_with_the_state_and_a_default_one_is_rebuilt_from_the_bounds(optimizer_class):
    bounds = [(0.0, 2.0)]
    default = optimizer_class(bounds, seed=1)
    assert default.to_state()["kernel"] is None
    one_lengthscale_apart = (np.array([[0.0]]), np.array([[0.4]]))  # the default: 0.2 × the range
    np.testing.assert_allclose(default.kernel(*one_lengthscale_apart), [[np.exp(-0.5)]], rtol=1e-12)
    given = optimizer_class(bounds, seed=1, kernel=SquaredExponential([0.7], variance=2.0))
    record = json.loads(json.dumps(given.to_state()))["kernel"]
    rebuilt = optimizer_class(bounds, seed=1, kernel=record)
    np.testing.assert_allclose(rebuilt.kernel(np.array([[0.0]]), np.array([[0.7]])), [[2 * np.exp(-0.5)]], rtol=1e-12)
    with pytest.raises(ValueError, match="kernel must be None, a lensopt Kernel or a saved kernel record; got str"):
        optimizer_class(bounds, kernel="se")


def test_a_duel_of_a_point_against_itself_is_refused_by_the_probit_and_copeland_optimizers():
    """Found by an audit of the Python API: both took a duel whose two members were one point (the
    ranking optimizer already refused it); a link model's fit then failed on every later ask."""
    from lensopt.preference.copeland import CopelandOptimizer

    same = DuelQuery(context=np.array([0.5]), members=np.array([[0.3, 0.4], [0.3, 0.4]]))
    probit = PreferenceOptimizer([(0.0, 1.0)] * 2, context_bounds=[(0.2, 1.0)], rule="muc-ald", seed=2, n_initial=4)
    for tell in (lambda: probit.tell(same, 1), lambda: probit.tell_same(same)):
        with pytest.raises(ValueError, match=r"^a duel's two members must differ; both are \[0\.3, 0\.4\]$"):
            tell()
    copeland = CopelandOptimizer([(0.0, 1.0)] * 2, seed=3, n_initial=2)
    with pytest.raises(ValueError, match=r"^a duel's two members must differ"):
        copeland.tell(DuelQuery(context=np.zeros(0), members=same.members), 1)
    assert probit.n_trials == copeland.n_trials == 0
