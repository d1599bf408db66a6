"""The certainty's draws by stages (issue 18) against independent computations on real sessions.

The staged, partly low-rank draws must estimate the same probability as plain joint draws of the
candidates (checked against an eigendecomposition with many draws: within Monte Carlo error), must
reproduce the posterior covariance (their factor, deterministically), and the stopping rule's quick
answer (:func:`confidence_reaches`) must be exactly the full computation's. No timing here: speed
is reported by ``lensopt bench decision-time --handler --stop 0.95``.
"""

import numpy as np
import pytest

from lensopt.observer import draw_patients
from lensopt.refraction import certainty
from lensopt.refraction.certainty import (
    N_DRAWS,
    PRECISE_DRAWS,
    PRUNE_SDS,
    RANK_TOLERANCE,
    candidate_lenses,
    confidence_reaches,
    lens_certainty,
    narrowly_reaches,
)
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.stopping import StopRule

#: Fixed sessions: (rule, seed, trials). Tuning seeds (below 100,000).
SESSIONS = [("ucb-ald", 1001, 40), ("ts-ald", 1002, 70), ("ucb-ald", 1004, 100), ("ts-ald", 1002, 120)]


def _session(rule, seed, trials, stop=None):
    patient = draw_patients(1, seed)[0]
    opt = RefractionOptimizer(rule=rule, seed=seed, stop=stop)
    for _ in range(trials):
        trial = opt.ask()
        opt.tell(trial, patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
    return opt


@pytest.fixture(scope="module", params=SESSIONS, ids=[f"{r}-{s}-{t}" for r, s, t in SESSIONS])
def session(request):
    opt = _session(*request.param)
    s = opt.settings
    return opt, (opt.model, opt.best(), s.system_bounds[0], s.system_bounds[1])


def brute_force_confidence(model, best_lens, sphere_bounds, cylinder_bounds, n_draws, rng, tolerance=0.025):
    """The confidence as issue 14 defined it, computed independently: the same candidates and
    pruning, all of them drawn jointly at once from an eigendecomposition of their covariance."""
    lenses = candidate_lenses(best_lens, sphere_bounds, cylinder_bounds, model.X_train_[:, 1:])
    at_zero = np.column_stack([np.zeros(len(lenses)), lenses])
    mu, var = model.predict_latent(at_zero)
    sd = np.sqrt(np.maximum(var, 0))
    keep = mu + PRUNE_SDS * sd >= np.max(mu - PRUNE_SDS * sd)
    keep[0] = True
    points = np.vstack([at_zero[keep], [[1.0, *lenses[0]]]])
    mean, cov = model.predict_latent(points, full_cov=True)
    eigenvalues, vectors = np.linalg.eigh(cov)
    draws = mean + rng.standard_normal((n_draws, len(mean))) @ (vectors * np.sqrt(np.clip(eigenvalues, 0, None))).T
    g, w = draws[:, :-1], draws[:, -1] - draws[:, 0]
    within = (w > 0) & (g.max(axis=1) - g[:, 0] <= tolerance * w)
    return float(np.mean(within))


def test_staged_confidence_matches_a_brute_force_computation_within_monte_carlo_error(session):
    _, args = session
    fast = lens_certainty(*args, np.random.default_rng(11)).confidence
    reference = brute_force_confidence(*args, 40_000, np.random.default_rng(12))
    assert 0.02 < reference < 0.98  # neither trivial case
    se = np.sqrt(reference * (1 - reference) * (1 / 512 + 1 / 40_000))
    assert abs(fast - reference) <= 4 * se, (fast, reference, se)
    # with many draws the two agree to the finer error too: no bias from the stages or the low rank
    many = lens_certainty(*args, np.random.default_rng(13), n_draws=40_000).confidence
    assert abs(many - reference) <= 4 * np.sqrt(2 * reference * (1 - reference) / 40_000), (many, reference)


def test_the_stage_factors_reproduce_the_posterior_covariance(session):
    """Assembled, the stages' factors ``G`` (draws = mean + z Gᵀ) give ``G Gᵀ`` = the model's joint
    covariance of the points, up to the jitter and the low-rank stage's tolerance."""
    opt, args = session
    _, points, scale = certainty._prepare(*args)
    mean, cov = opt.model.predict_latent(points, full_cov=True)
    blocks, means, width = [], [], 0
    for start, end, block_mean, cross, factor in certainty._stage_factors(opt.model, points, scale):
        assert cross.shape == (end - start, start)
        blocks.append((cross, factor, width))
        means.append(block_mean)
        width += factor.shape[1]
    G = np.zeros((len(points), width))
    row = 0
    for cross, factor, offset in blocks:
        n = factor.shape[0]
        G[row : row + n, : cross.shape[1]] = cross
        G[row : row + n, offset : offset + factor.shape[1]] = factor
        row += n
    assert row == len(points) and width < len(points)  # the last stage is of lower rank
    np.testing.assert_allclose(np.concatenate(means), mean, rtol=0, atol=1e-9 * np.abs(mean).max())
    residual = cov - G @ G.T
    assert np.abs(residual).max() <= 10 * RANK_TOLERANCE * scale
    # the part left out is positive semi-definite, at most the tolerance per lens
    assert np.diag(residual).max() <= 2 * RANK_TOLERANCE * scale


def test_the_stopping_rule_s_quick_answer_is_the_full_computation_s(session):
    """For every threshold, the full computation refined near that threshold (as the stopping rule's
    confidence is) and the quick answer agree exactly."""
    _, args = session
    first = lens_certainty(*args, np.random.default_rng(5)).confidence  # 512 draws: no rule, no refining
    near = (first, min(first + 1 / 512, 0.999), max(first - 1 / 512, 0.001), min(first + 0.02, 0.999))
    for threshold in sorted({0.01, 0.3, 0.5, 0.7, 0.95, 0.99, *near}):
        full = lens_certainty(*args, np.random.default_rng(5), threshold=threshold).confidence
        assert confidence_reaches(*args, np.random.default_rng(5), threshold) == (full >= threshold), threshold


def test_every_stage_bounds_the_confidence_from_above(session):
    """A draw lost to a lens of an early stage stays lost: the fraction not yet lost falls with
    every stage and ends at the confidence of the first 512 draws."""
    opt, args = session
    _, points, scale = certainty._prepare(*args)
    bounds = [
        float(np.mean(certainty._losses(d) <= 0.025))
        for d in certainty._draws(certainty._stage_factors(opt.model, points, scale), 512, np.random.default_rng(9))
    ]
    assert len(bounds) == 3
    assert bounds == sorted(bounds, reverse=True)
    assert bounds[-1] == lens_certainty(*args, np.random.default_rng(9)).confidence  # no rule: 512 draws


def test_the_optimizer_stops_exactly_where_its_confidence_first_reaches_the_threshold():
    """should_stop (the quick answer) and confidence() (the full computation) of the same optimizer
    (another one, asked only for its confidence) agree at every trial; a threshold below the session's confidence stops it at the first trial
    where confidence() reaches it."""
    rule, seed = "ucb-ald", 1003
    confidences = []
    patient = draw_patients(1, seed)[0]
    stop = StopRule(confidence=0.3, min_trials=20, max_trials=200)
    quick = RefractionOptimizer(rule=rule, seed=seed, stop=stop)
    full = RefractionOptimizer(rule=rule, seed=seed, stop=stop)  # the same rule: refined near the same threshold
    stopped_at = None
    for _ in range(60):
        trial = quick.ask()
        assert trial == full.ask()
        correct = patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)
        quick.tell(trial, correct)
        full.tell(trial, correct)
        if quick.n_trials >= 20:
            confidences.append(full.confidence())
            if quick.should_stop():
                stopped_at = quick.n_trials
                break
    first = next(20 + i for i, c in enumerate(confidences) if c >= 0.3)
    assert stopped_at == first


def test_candidate_lenses_are_those_of_the_plain_computation():
    """The faster candidate set (cached coarse grid, sort-based de-duplication) equals the plain one
    with ``np.unique``: same lenses, same order, on random and grid-valued tested lenses."""

    def plain(best_lens, sphere_bounds, cylinder_bounds, tested_lenses=None):
        grid = certainty._grid
        coarse = (
            np.array(np.meshgrid(grid(*sphere_bounds, 0.5), grid(*cylinder_bounds, 0.5), indexing="ij"))
            .reshape(2, -1)
            .T
        )
        tested = np.zeros((0, 2)) if tested_lenses is None else np.unique(np.asarray(tested_lenses, float), axis=0)
        if len(tested):
            distance = np.sqrt(((coarse[:, None, :] - tested[None, :, :]) ** 2).sum(-1)).min(axis=1)
            coarse = np.vstack([coarse[distance <= 1.0], tested])
        offsets = grid(-1.0, 1.0, 0.25)
        fine = np.array(np.meshgrid(best_lens[0] + offsets, best_lens[1] + offsets, indexing="ij")).reshape(2, -1).T
        inside = (
            (fine[:, 0] >= sphere_bounds[0])
            & (fine[:, 0] <= sphere_bounds[1])
            & (fine[:, 1] >= cylinder_bounds[0])
            & (fine[:, 1] <= cylinder_bounds[1])
        )
        lenses = np.vstack([np.asarray(best_lens, float)[None, :], fine[inside], coarse])
        _, first = np.unique(np.round(lenses, 9), axis=0, return_index=True)
        return lenses[np.sort(first)]

    rng = np.random.default_rng(0)
    for case in range(300):
        n = int(rng.integers(0, 80))
        tested = rng.integers(-16, 17, (n, 2)) * 0.25 if case % 2 else rng.uniform(-4.2, 4.2, (n, 2))
        best = tested[0] if n and case % 3 == 0 else rng.uniform(-4, 4, 2)
        box = ((-4.0, 4.0), (-4.0, 4.0)) if case % 4 else ((-3.0, 2.0), (-2.5, 4.0))
        given = tested if n or case % 5 else None
        np.testing.assert_array_equal(candidate_lenses(best, *box, given), plain(best, *box, given))


def test_a_confidence_just_below_the_threshold_does_not_pass_it_by_sampling_noise():
    """A stopping rule asked after every trial stops at the first *estimate* past its threshold: with
    512 draws (SE ≈ 0.015 at 0.87) a posterior 0.02 below the threshold passes it about one time in
    eleven by sampling noise alone. The rule's confidence refines every estimate that narrowly passes
    to 4096 draws: over 100 independent estimates of one posterior none passes, while the plain
    512-draw estimates do; the refined ones lie near a brute-force computation's value."""
    opt = _session("ts-ald", 1002, 120)
    s = opt.settings
    args = (opt.model, opt.best(), s.system_bounds[0], s.system_bounds[1])
    reference = brute_force_confidence(*args, 100_000, np.random.default_rng(12))
    assert 0.8 < reference < 0.95  # not trivially sure
    threshold = reference + 0.02
    plain = [lens_certainty(*args, np.random.default_rng(100 + k)) for k in range(100)]
    rule = [lens_certainty(*args, np.random.default_rng(100 + k), threshold=threshold) for k in range(100)]
    passed = [p.confidence >= threshold for p in plain]
    assert sum(passed) >= 2  # the noise the rule must not stop on
    assert not any(r.confidence >= threshold for r in rule)
    for p, r in zip(plain, rule):
        refined = narrowly_reaches(p.confidence, threshold, N_DRAWS)
        assert r.n_draws == (PRECISE_DRAWS if refined else N_DRAWS)
        if refined:
            assert abs(r.confidence - reference) < 4 * np.sqrt(reference * (1 - reference) / PRECISE_DRAWS) + 0.02 / 8
        else:
            assert r == p
    # the quick answer of the stopping rule refines the same way (the draws that passed among them):
    # exactly the full computation's
    for k in [k for k, p in enumerate(passed) if p] + [0, 1]:
        full = rule[k].confidence
        assert confidence_reaches(*args, np.random.default_rng(100 + k), threshold) == (full >= threshold)


def test_the_estimate_is_refined_where_it_reaches_the_threshold_by_less_than_its_noise(session):
    """Refined where the 512 draws reach the threshold by less than four standard errors
    (``√(t(1 − t)/512)``, 0.0096 at 0.95), and only there: elsewhere the certainty is that of the 512
    draws, number for number."""
    _, args = session
    first = lens_certainty(*args, np.random.default_rng(3))
    assert first.n_draws == N_DRAWS
    se = np.sqrt(0.95 * 0.05 / N_DRAWS)
    assert narrowly_reaches(0.95, 0.95, N_DRAWS) and narrowly_reaches(0.95 + 3.9 * se, 0.95, N_DRAWS)
    assert not narrowly_reaches(0.95 + 4.1 * se, 0.95, N_DRAWS) and not narrowly_reaches(0.9499, 0.95, N_DRAWS)
    assert not narrowly_reaches(0.95, None, N_DRAWS)
    c = first.confidence
    for threshold in (0.05, 0.5, 0.95, c, max(c - 0.01, 0.001), min(c + 0.01, 0.999)):
        certainty_ = lens_certainty(*args, np.random.default_rng(3), threshold=threshold)
        refined = narrowly_reaches(c, threshold, N_DRAWS)
        assert refined == (threshold <= c < threshold + 4 * np.sqrt(threshold * (1 - threshold) / N_DRAWS))
        assert certainty_.n_draws == (PRECISE_DRAWS if refined else N_DRAWS)
        if not refined:
            assert certainty_ == first
