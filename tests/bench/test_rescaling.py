"""The authors' rescaling: log when variance > 100 and values positive, standardize, negate."""

import json

import numpy as np
import pytest

from lensopt.bench.functions import FUNCTIONS, get_function
from lensopt.bench.reference_table import (
    DEFAULT_TABLE_PATH,
    compute_rescaling_table,
    load_rescaling_table,
    write_rescaling_table,
)
from lensopt.bench.rescaling import LOG_VARIANCE_THRESHOLD, Rescaling, compute_rescaling


def test_reference_table_records_seed_command_and_every_function():
    table = json.loads(DEFAULT_TABLE_PATH.read_text())
    assert table["n_samples"] == 50_000
    assert table["command"].startswith("lensopt bench rescale")
    assert f"--seed {table['seed']}" in table["command"]
    assert set(table["functions"]) == set(FUNCTIONS)


def test_regenerating_with_the_recorded_seed_reproduces_the_reference_table():
    stored = json.loads(DEFAULT_TABLE_PATH.read_text())
    fresh = compute_rescaling_table(seed=stored["seed"], n_samples=stored["n_samples"])
    for slug, entry in stored["functions"].items():
        for key in ("take_log", "mean", "std"):
            assert fresh["functions"][slug][key] == pytest.approx(entry[key], rel=1e-12), slug


def test_log_rule_follows_variance_and_sign():
    table = json.loads(DEFAULT_TABLE_PATH.read_text())["functions"]
    for slug, e in table.items():
        expected = e["raw_variance"] > LOG_VARIANCE_THRESHOLD and e["raw_min"] > 0
        assert e["take_log"] == expected, slug
    # Hand cases: Trid and Six-Hump Camel have large variance but negative values: no log.
    assert not table["trid"]["take_log"] and not table["six-hump-camel"]["take_log"]
    assert table["rosenbrock"]["take_log"] and not table["ackley"]["take_log"]


def test_sphere_raw_variance_matches_the_closed_form():
    # x ~ U(-a, a): Var(x^2) = a^4/5 - a^4/9 = 4a^4/45, and the two coordinates are independent.
    a = 5.12
    expected = 2 * 4 * a**4 / 45
    _, summary = compute_rescaling(get_function("sphere"), seed=3)
    # Monte Carlo error of a variance from 50,000 samples is below 2 % here.
    assert summary["raw_variance"] == pytest.approx(expected, rel=0.03)
    assert expected > LOG_VARIANCE_THRESHOLD


@pytest.mark.parametrize("slug", ["ackley", "rosenbrock", "hartmann6", "eggholder"])
def test_rescaled_function_is_standardized_and_maximized(slug):
    fn = get_function(slug)
    rescaling = load_rescaling_table()[slug]
    X = fn.sample_uniform(50_000, np.random.default_rng(12345))  # not the table's stream
    g = rescaling.transform(fn(X))
    assert abs(g.mean()) < 0.03 and g.var() == pytest.approx(1.0, abs=0.05)
    g_star = rescaling.transform(np.array([fn.optimal_value]))[0]
    assert g_star >= g.max()


def test_transform_by_hand():
    r = Rescaling(take_log=True, mean=1.0, std=2.0)
    assert r.transform(np.array([np.e**3]))[0] == pytest.approx(-(3 - 1) / 2)
    assert np.isfinite(r.transform(np.array([0.0]))[0])  # floored, not -inf
    assert Rescaling(False, 1.0, 2.0).transform(np.array([5.0]))[0] == pytest.approx(-2.0)


def test_bad_std_raises():
    with pytest.raises(ValueError, match="std"):
        Rescaling(False, 0.0, 0.0)


def test_write_and_load_round_trip(tmp_path):
    table = compute_rescaling_table(seed=7, n_samples=1000, slugs=["sphere", "trid"])
    path = write_rescaling_table(table, tmp_path / "r.json")
    loaded = load_rescaling_table(path)
    assert set(loaded) == {"sphere", "trid"}
    assert loaded["trid"].mean == pytest.approx(table["functions"]["trid"]["mean"])


def test_missing_table_names_the_regenerating_command(tmp_path):
    with pytest.raises(ValueError, match="lensopt bench rescale"):
        load_rescaling_table(tmp_path / "nope.json")


def test_reference_table_holds_a_kernel_fit_for_every_function():
    table = json.loads(DEFAULT_TABLE_PATH.read_text())
    assert "--fit-kernels" in table["command"]
    for slug, entry in table["functions"].items():
        fn, kernel = FUNCTIONS[slug], entry["kernel"]
        assert kernel["family"] == fn.kernel_family and kernel["n_samples"] == 1000
        widths = fn.upper - fn.lower
        ratios = np.array(kernel["lengthscales"]) / widths
        assert len(ratios) == fn.dim and np.all((ratios > 1e-4) & (ratios <= 10 + 1e-9)), slug
        assert 1e-2 - 1e-12 <= kernel["variance"] <= 1e2 + 1e-9
