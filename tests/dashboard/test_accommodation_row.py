"""The dashboard's summary says of a search of sphere and cylinder whose model has no accommodation
that its lens may be too minus, and what to do — as the closing console warns
(:mod:`lensopt.refraction.most_plus`) — and says nothing of the kind where the lens is the most-plus
one: the acuity law told the amplitudes (its rule names them), the full prescription."""

from __future__ import annotations

import pytest
from dashboard_records import store_simulated_trials

from lensopt.dashboard.model import snapshot_from_store
from lensopt.dashboard.panels import summary_rows
from lensopt.modes.registry import get_mode
from lensopt.observer import SimulatedPatient
from lensopt.refraction.most_plus import MAY_BE_TOO_MINUS, MOST_PLUS_ADVICE
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.store import SessionStore

N_TRIALS = 8

#: Each session's optimizer, by name: the letter mode's as ``lensopt run`` makes it.
OPTIMIZERS = {
    "ucb-ald": lambda: get_mode("letters").new_optimizer({}, rule="ucb-ald", seed=2),
    "acuity-law": lambda: get_mode("letters").new_optimizer({}, rule="acuity-law", seed=2),
    "acuity-law, accommodating": lambda: get_mode("letters").new_optimizer(
        {"accommodation_d": (0.0, 2.0, 8.0)}, rule="acuity-law", seed=2
    ),
    "prescription": lambda: PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=2),
}


@pytest.fixture(scope="module")
def sessions_db(tmp_path_factory):
    """A finished letter session of each optimizer of :data:`OPTIMIZERS`; (path, {name: id})."""
    path = tmp_path_factory.mktemp("accommodation-row") / "s.db"
    ids = {}
    with SessionStore(path) as store:
        for name, make in OPTIMIZERS.items():
            opt = make()
            sid = ids[name] = store.create_session("P01", {"protocol": {"name": "t"}}, {}, opt.settings_dict(), 2)
            patient = SimulatedPatient(-1.25, -0.75, slope=5.0, seed=2)
            store_simulated_trials(store, sid, opt, patient, N_TRIALS)
            store.set_status(sid, "finished")
    return path, ids


def _rows(sessions_db, name) -> dict:
    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        snap = snapshot_from_store(store, ids[name])
    return snap, {row[0]: row[1:] for row in summary_rows(snap)}


@pytest.mark.parametrize(
    ("name", "advice"),
    [
        ("ucb-ald", MOST_PLUS_ADVICE),
        ("acuity-law", "push plus on the chart, or set [optimizer] accommodation_d"),
    ],
)
def test_a_letter_search_without_accommodation_in_its_model_says_its_lens_may_be_too_minus(sessions_db, name, advice):
    snap, rows = _rows(sessions_db, name)
    assert snap.best is not None and snap.header.rule == name
    assert rows["Accommodation"][0] == MAY_BE_TOO_MINUS
    assert rows["Accommodation"][1].endswith(advice)
    labels = list(rows)
    assert labels.index("Accommodation") < labels.index("Sphere")  # under the lens, as for comparisons


@pytest.mark.parametrize("name", ["acuity-law, accommodating", "prescription"])
def test_a_search_whose_lens_is_the_most_plus_one_has_no_accommodation_warning(sessions_db, name):
    snap, rows = _rows(sessions_db, name)
    assert "Accommodation" not in rows
    assert snap.header.most_plus_advice is None
    if name != "prescription":  # its rule says what the model allowed for
        assert snap.header.rule == "acuity-law, accommodation up to 8 D"
