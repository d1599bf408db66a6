"""``[optimizer] accommodation_d``: the acuity-law optimizer's prior amplitudes of accommodation in a
protocol — read, refused where no optimizer would use it, left out of a snapshot at its default,
handed to the optimizer, and kept by a session killed and resumed."""

import pytest

from experiment_helpers import FAST, REPO, run_lensopt, write_protocol
from lensopt.dashboard.model import snapshot_from_store
from lensopt.dashboard.prescription_text import build_record
from lensopt.errors import ProtocolError
from lensopt.experiment.modes import mode_for
from lensopt.experiment.protocol import load_protocol, protocol_from_dict
from lensopt.refraction.acuity_law import AcuityLawOptimizer
from lensopt.refraction.acuity_law_settings import RELAXED_LENS
from lensopt.store import SessionStore

LAW = {"optimizer.rule": '"acuity-law"', "optimizer.n_initial": None, "optimizer.inference": None}


def test_the_amplitudes_reach_the_acuity_law_optimizer_and_the_snapshot(tmp_path):
    protocol = load_protocol(write_protocol(tmp_path / "p.toml", **LAW, **{"optimizer.accommodation_d": "[8, 0, 2]"}))
    assert protocol.optimizer.accommodation_d == (0.0, 2.0, 8.0)
    assert protocol.to_dict()["optimizer"]["accommodation_d"] == [0.0, 2.0, 8.0]
    assert protocol_from_dict(protocol.to_dict(), source="snapshot").optimizer == protocol.optimizer
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=1, letter_bounds_logmar=(-0.3, 1.0))
    assert isinstance(optimizer, AcuityLawOptimizer) and optimizer.settings.accommodation_d == (0.0, 2.0, 8.0)


def test_without_amplitudes_the_snapshot_reads_as_every_one_before_it(tmp_path):
    protocol = load_protocol(write_protocol(tmp_path / "p.toml", **LAW))
    assert protocol.optimizer.accommodation_d is None  # not said
    assert "accommodation_d" not in protocol.to_dict()["optimizer"]
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=1, letter_bounds_logmar=(-0.3, 1.0))
    assert "accommodation_d" not in optimizer.settings_dict()


def test_amplitudes_with_a_gp_rule_are_refused_in_one_line(tmp_path):
    path = write_protocol(tmp_path / "p.toml", **{"optimizer.rule": '"ucb-ald"', "optimizer.accommodation_d": "[0, 4]"})
    with pytest.raises(ProtocolError) as refused:
        load_protocol(path)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{path}: optimizer.accommodation_d sets "), message
    assert "remove optimizer.accommodation_d or choose rule 'acuity-law'" in message


@pytest.mark.parametrize("value", ["[-1]", "[0, 30]", "[]", '"large"'])
def test_bad_amplitudes_are_refused_in_one_line(tmp_path, value):
    path = write_protocol(tmp_path / "p.toml", **LAW, **{"optimizer.accommodation_d": value})
    with pytest.raises(ProtocolError, match=r"accommodation_d must be amplitudes of accommodation from 0 to 20 D"):
        load_protocol(path)


def test_the_clinical_refraction_protocol_expects_an_eye_that_accommodates():
    protocol = load_protocol(REPO / "protocols" / "clinical-refraction.toml")
    assert protocol.optimizer.rule == "acuity-law" and len(protocol.optimizer.accommodation_d) > 1
    assert protocol.optimizer.accommodation_d[0] == 0.0  # an eye that does not accommodate is one of them


def test_a_session_with_amplitudes_killed_mid_way_resumes_with_them(tmp_path):
    """``lensopt run`` killed after three answers: the stored settings hold the amplitudes, and the
    resumed session asks what the optimizer rebuilt from them and the stored answers asks."""
    from experiment_helpers import assert_resumed_as_the_rebuilt_acuity_law_optimizer, kill_mid_way_and_resume

    db = tmp_path / "s.db"
    fields = {**FAST, "timing.simulated_response_s": "0.3", **LAW, "optimizer.accommodation_d": "[0, 1, 4]"}
    protocol = write_protocol(tmp_path / "law.toml", **fields)
    _, info, before, after, resumed = kill_mid_way_and_resume(db, protocol, lambda store, sid: store.trials(sid))
    k = len(before)
    assert info.optimizer_settings["accommodation_d"] == [0.0, 1.0, 4.0]
    assert f"resuming at trial {k + 1} of 8" in resumed.stdout
    assert after[:k] == before and [t.index for t in after] == list(range(1, 9))
    assert_resumed_as_the_rebuilt_acuity_law_optimizer(info, before, after)
    # the console, the dashboard and the record say the lens is the relaxed eye's
    relaxed = "the model allowed for accommodation up to 4 D (0, 1, 4 D): this is the relaxed eye's lens"
    assert relaxed in resumed.stdout, resumed.stdout
    with SessionStore(db, readonly=True) as store:
        snap = snapshot_from_store(store, info.session_id)
        record = build_record(store.session(info.session_id), trials=store.trials(info.session_id))
    assert snap.header.rule == "acuity-law, accommodation up to 4 D"
    assert ("Model", f"allowed for accommodation up to 4 D (0, 1, 4 D); the lens is {RELAXED_LENS}") in record.session


def test_without_amplitudes_the_lens_is_not_called_the_relaxed_eyes_but_may_be_too_minus(tmp_path):
    """The law alone (and every session stored before the setting): the log warns that the lens may
    not be the most-plus one and names the setting; the dashboard and the record say nothing of
    accommodation."""
    db = tmp_path / "s.db"
    protocol = write_protocol(tmp_path / "law.toml", **FAST, **LAW)
    done = run_lensopt("run", "--protocol", protocol, "--participant", "K", "--seed", 5, "--trials", 4, "--db", db)
    assert done.returncode == 0, done.stderr
    assert "relaxed eye" not in done.stdout and "the model allowed for" not in done.stdout
    warning = "may not be the most-plus lens: an eye that accommodates sees as well through more minus lenses"
    assert (
        warning in done.stdout and "tell the model the eye may accommodate ([optimizer] accommodation_d" in done.stdout
    )
    with SessionStore(db, readonly=True) as store:
        sid = store.latest_session_id()
        snap = snapshot_from_store(store, sid)
        record = build_record(store.session(sid), trials=store.trials(sid))
    assert snap.header.rule == "acuity-law"
    assert "Model" not in dict(record.session) and not any("accommodation" in t for t in record.texts())


def test_an_eye_said_not_to_accommodate_gets_no_warning_to_push_plus(tmp_path):
    """``accommodation_d = [0]`` written (a cyclopleged or presbyopic eye, as clinical-refraction's
    comment advises): the same decisions as the law left unsaid, but the protocol's snapshot and the
    stored settings keep what was said, so the log says the lens of best acuity is the most-plus one
    instead of asking for the amplitudes, and the dashboard has no "Accommodation" row."""
    db = tmp_path / "s.db"
    protocol = write_protocol(tmp_path / "zero.toml", **FAST, **LAW, **{"optimizer.accommodation_d": "[0]"})
    loaded = load_protocol(protocol)
    assert loaded.optimizer.accommodation_d == (0.0,) and loaded.to_dict()["optimizer"]["accommodation_d"] == [0.0]
    done = run_lensopt("run", "--protocol", protocol, "--participant", "K", "--seed", 5, "--trials", 4, "--db", db)
    assert done.returncode == 0, done.stderr
    assert "may not be the most-plus lens" not in done.stdout
    assert "the model was told the eye does not accommodate (accommodation_d = [0]): its lens of best acuity is" in (
        done.stdout
    )
    with SessionStore(db, readonly=True) as store:
        sid = store.latest_session_id()
        snap = snapshot_from_store(store, sid)
        settings = store.session(sid).optimizer_settings
    assert settings["accommodation_d"] == [0.0]
    assert snap.header.most_plus_advice is None and snap.header.accommodation_rows() == []
