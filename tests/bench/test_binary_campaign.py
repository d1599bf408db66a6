"""Binary BO without a context (companion paper Table 1): the rules find a known optimum, the
campaign's runs are the contextual optimizer's with the context pinned at s = 1, and a rerun only
runs what is missing."""

import numpy as np
import pytest
from scipy.special import ndtr

from lensopt.bench.binary import PinnedContext, binary_optimizer
from lensopt.bench.binary_protocol import BINARY_BETA, BINARY_RULE_LABELS, BINARY_RULES
from lensopt.bench.function_session import outcome_uniforms
from lensopt.bench.problems import CONTEXT_BOUNDS, function_problem
from lensopt.bench.report import rule_label
from lensopt.bench.runner import BENCHMARK_TASK, CampaignTask, RunSpec, record_path, run_campaign, run_one
from lensopt.binary import ALL_RULES, ContextualOptimizer, Query
from lensopt.binary import optimizer as binary_optimizer_module

#: Forrester et al. (2008), maximized and rescaled (g* = 1.450): the global optimum is at
#: x* = 0.75725; the other local maximum, at x = 0.143 (g = 0.32), is 0.6 away. Near x*,
#: g ≈ g* − 120 d² (d the distance to x*), so Φ(g) drops by φ(g*) · 120 d² ≈ 17 d². 100 answers
#: measure a success rate of 0.93 to ± 0.026 (one standard error) at best, i.e. they cannot tell x*
#: from points closer than d ≈ sqrt(0.026 / 17) ≈ 0.04, whose regret is 120 · 0.04² ≈ 0.2: that is
#: the tolerance. It keeps the local maximum (regret 1.13) and the box's edges far outside.
FORRESTER_OPTIMUM_X = 0.75725
OPTIMUM_TOLERANCE_X = 0.04
OPTIMUM_TOLERANCE_REGRET = 0.2


def _spec(rule, problem="forrester", seed=3, n_iterations=100, report_every=5, beta=None):
    return RunSpec("binary", problem, rule, seed, n_iterations, n_initial=2, report_every=report_every, beta=beta)


@pytest.mark.parametrize("rule", ["ucb-phi", "ucb-f"])
def test_ucb_phi_and_ucb_f_find_the_optimum_of_the_one_dimensional_forrester_function(rule):
    record = run_one(_spec(rule).to_dict())
    (x_hat,) = record["final_point"]
    assert abs(x_hat - FORRESTER_OPTIMUM_X) < OPTIMUM_TOLERANCE_X
    assert record["optimal_value"] - record["final_value"] < OPTIMUM_TOLERANCE_REGRET
    # the search concentrates where the function is high: most answers are successes (P = 0.93
    # at x*; about half for uniform queries)
    assert record["answers"].count("1") > 0.7 * len(record["answers"])


def _pinned_contextual_session(spec):
    """The contextual optimizer of the rule's x-step, driven by hand: every query told at s = 1,
    answered ``u_t < Φ(g(x))`` with the run's uniform draws; the reported optimum after the
    trials the spec reports after."""
    problem = function_problem(spec.problem)
    opt = ContextualOptimizer(
        problem.system_bounds,
        CONTEXT_BOUNDS,
        rule=BINARY_RULES[spec.rule],
        seed=spec.seed,
        kernel=problem.kernel(),
        n_initial=spec.n_initial,
        beta=BINARY_BETA,
    )
    points, answers, trajectory, value = [], [], [], None
    for t, u in enumerate(outcome_uniforms(spec.seed, spec.n_iterations), start=1):
        x = opt.ask().system
        answer = bool(u < ndtr(problem.g(x[None, :])[0]))
        opt.tell(Query(np.array([1.0]), x), answer)
        points.append(np.concatenate([[1.0], x]))
        answers.append("1" if answer else "0")
        if spec.reports_after(t):
            lower, upper = problem.function.lower, problem.function.upper
            value = float(problem.g(np.clip(opt.best(), lower, upper)[None, :])[0])
        trajectory.append(value)
    return np.array(points), "".join(answers), trajectory


@pytest.mark.parametrize("rule", list(BINARY_RULES))
def test_a_binary_run_is_the_contextual_optimizers_run_with_the_context_pinned_at_one(rule, monkeypatch):
    spec = _spec(rule, problem="six-hump-camel", seed=5, n_iterations=12, report_every=3)
    told = []
    tell = ContextualOptimizer.tell

    def spy(self, query, outcome, **kwargs):
        told.append(np.asarray(query.point, dtype=float).copy())
        return tell(self, query, outcome, **kwargs)

    monkeypatch.setattr(binary_optimizer_module.ContextualOptimizer, "tell", spy)
    record = run_one(spec.to_dict())
    monkeypatch.undo()

    points, answers, trajectory = _pinned_contextual_session(spec)
    assert np.array_equal(np.array(told), points)  # same queries, all at s = 1
    assert record["answers"] == answers
    assert record["trajectory"] == trajectory
    assert record["final_value"] == trajectory[-1]


def test_the_pinned_optimizer_refuses_an_answer_at_another_context():
    spec = _spec("random", problem="forrester")
    opt = binary_optimizer(spec, function_problem("forrester"))
    query = opt.ask()
    assert list(query.context) == [1.0]
    with pytest.raises(ValueError, match="pinned"):
        opt.tell(Query(np.array([0.5]), query.system), True)
    with pytest.raises(ValueError, match="context value"):
        PinnedContext(opt.optimizer, [1.0, 1.0])


def test_an_unknown_binary_rule_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown binary rule 'ucb-ald'"):
        run_one(_spec("ucb-ald", n_iterations=3).to_dict())


def test_every_binary_rule_runs_a_contextual_rule_and_has_the_papers_label():
    assert set(BINARY_RULES.values()) <= set(ALL_RULES)
    assert [rule_label(r) for r in BINARY_RULES] == list(BINARY_RULE_LABELS.values())
    assert rule_label("ucb-phi") == "UCB_Φ"


def test_a_rerun_of_the_binary_campaign_runs_only_the_runs_without_a_record(tmp_path):
    executed = []

    def counting_run(spec_dict):
        executed.append(spec_dict["problem"] + "/" + spec_dict["rule"])
        return BENCHMARK_TASK.run(spec_dict)

    task = CampaignTask("counting", counting_run, BENCHMARK_TASK.record_path, BENCHMARK_TASK.finished)
    specs = [
        _spec(r, problem=p, seed=0, n_iterations=4, report_every=2)
        for p in ("forrester", "beale")
        for r in ("ucb-phi", "random")
    ]

    first = run_campaign(specs, tmp_path, local_sync=True, progress=False, task=task)
    assert (first.n_done, first.n_skipped, len(executed)) == (4, 0, 4)

    record_path(tmp_path, specs[1]).unlink()  # one run lost (or interrupted)
    executed.clear()
    second = run_campaign(specs, tmp_path, local_sync=True, progress=False, task=task)
    assert executed == ["forrester/random"]
    assert (second.n_skipped, second.n_submitted, second.n_done) == (3, 1, 1)

    executed.clear()
    third = run_campaign(specs, tmp_path, local_sync=True, progress=False, task=task)
    assert executed == [] and third.n_skipped == 4
