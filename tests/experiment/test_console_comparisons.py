"""The clinician's console of duel and ranking sessions, as in a letter session: trial k of n and
the eye, the lenses to set in clinical notation each numbered as the patient hears it, the answer
keys, and at the end the best lens; the lens prompt is saved as ``trial-NNN-lens.png``.

Before, the console said only "lensopt / Waiting for the answer" while the patient compared the
lenses, and the end screen of a search without a start showed no lens (it was on stdout only).
"""

import re

import pytest

from experiment_helpers import FAST, REPO, needs_display, write_protocol
from lensopt.experiment.session import RunRequest, run_session
from lensopt.refraction.lens import Lens
from lensopt.store import SessionStore

pytestmark = needs_display

START = "-1.00 / -0.50 x 180"
SIMULATED = {**FAST, "display.fullscreen": "false", "protocol.observer": '"simulated"'}

#: A lens power or axis, as the patient's window must never show one.
POWERS = re.compile(r"[+-]\d+\.\d\d|\bx \d{3}\b|plano", re.IGNORECASE)


def two_parameter(lens_d):
    return f"S {lens_d[0]:+.2f} D  C {lens_d[1]:+.2f} D"


def stored_lenses(store, kind, session_id):
    """Per stored trial: ``(record, [lens text, ...])``, each lens as the console writes it."""
    if kind == "duel":
        rows = store.duel_trials(session_id)
        if rows and rows[0].has_axes:
            return [
                (
                    r,
                    [
                        Lens(r.first_sphere_d, r.first_cylinder_d, r.first_axis_deg).format(),
                        Lens(r.second_sphere_d, r.second_cylinder_d, r.second_axis_deg).format(),
                    ],
                )
                for r in rows
            ]
        return [(r, [two_parameter(r.first_lens_d), two_parameter(r.second_lens_d)]) for r in rows]
    rows = store.ranking_trials(session_id)
    return [(r, [two_parameter(lens) for lens in r.lenses_d]) for r in rows]


@pytest.mark.parametrize(
    "protocol_name, start, kind, keys",
    [
        ("clinical-duel", None, "duel", "1: lens 1 clearer   ·   2: lens 2 clearer   ·   S: the same"),
        ("clinical-ranking", None, "ranking", "1, 2, 3: the lenses, clearest first"),
        ("clinical-prescription-duel", START, "duel", "S: the same"),
    ],
)
def test_the_console_shows_trial_eye_numbered_lenses_keys_and_the_best_lens(
    tmp_path, window, console_states, drawn_texts, protocol_name, start, kind, keys
):
    protocol = write_protocol(tmp_path / "p.toml", REPO / "protocols" / f"{protocol_name}.toml", **SIMULATED)
    db, frames, lines = tmp_path / "s.db", tmp_path / "frames", []
    outcome = run_session(
        RunRequest(
            db_path=db,
            protocol_path=protocol,
            participant="C",
            seed=4,
            trials=3,
            start=start,
            eye="OD",
            frames_dir=frames,
        ),
        log=lines.append,
        window=window,
    )
    assert outcome.status == "finished" and outcome.n_trials == 3
    with SessionStore(db, readonly=True) as store:
        trials = stored_lenses(store, kind, outcome.session_id)
    assert not [s for s in console_states if s.heading == "Waiting for the answer"]
    for number, (record, lenses) in enumerate(trials, start=1):
        listed = "\n".join(f"{k}:  {text}" for k, text in enumerate(lenses, start=1))
        mine = [s for s in console_states if s.trial_index == number]
        assert all(s.n_trials == 3 and s.eye == "OD" for s in mine)
        ready = "lens 2 ready" if kind == "duel" else "lenses 2 and 3 ready"
        prompt = [s for s in mine if s.heading.startswith("Set lens 1 on the phoropter, " + ready)]
        shown = [s for s in mine if s.heading.startswith(f"Letters {record.letters} shown at ")]
        assert prompt and prompt[0].lens_text == listed, (listed, prompt)
        assert shown and shown[0].lens_text == listed and keys in shown[0].keys_text, shown
        assert len(shown[0].answers) == number - 1
        # the prompt and the console while the line is up are saved, as the docs say
        assert (frames / f"trial-{number:03d}-lens.png").exists()
        assert (frames / f"trial-{number:03d}-console.png").exists()
    # stdout counts the trials with the eye, as the console does
    counted = [m.group(0) for m in (re.match(r"O[DS] trial +\d+/\d+", line) for line in lines) if m]
    assert counted == [f"OD trial   {k}/3" for k in (1, 2, 3)]
    # the end: the best lens found, in clinical notation for a prescription, else on the phoropter's steps
    end = console_states[-1]
    assert end.heading == "Session finished" and (frames / "end-console.png").exists()
    if start is None:
        (best,) = [line for line in lines if line.startswith("best lens OD: ")]
        on_phoropter = best.split("on the phoropter (0.25 D steps): ")[1]
        # a sphere-and-cylinder search by comparisons: its best lens, not a prescription (as the record says)
        assert (
            end.lens_text == f"OD  {on_phoropter} (estimate, not a prescription)" and "best lens found" in end.keys_text
        )
        assert "reports no prescription" in end.keys_text and "To continue" not in end.keys_text
    else:  # 3 duels of the full prescription: fewer than the 40 its accuracy was measured after
        assert end.lens_text == "OD  not enough answers to prescribe"
        assert "only 3 duels; lensopt's accuracy was measured after 40; about 37 more duels" in end.keys_text
        assert f"To continue: lensopt run --resume {outcome.session_id} --trials 40" in end.keys_text
    # no lens power on the patient's window
    on_patient = [text for win, text in drawn_texts if win is window]
    assert not [text for text in on_patient if POWERS.search(text)], on_patient


def test_a_ranking_console_shows_the_order_given_so_far(tmp_path, window, console_states):
    protocol = write_protocol(tmp_path / "p.toml", REPO / "protocols" / "clinical-ranking.toml", **SIMULATED)
    outcome = run_session(
        RunRequest(db_path=tmp_path / "s.db", protocol_path=protocol, participant="C", seed=4, trials=2),
        log=lambda line: None,
        window=window,
    )
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        orders = [r.order for r in store.ranking_trials(outcome.session_id)]
    for order in orders:  # after the first key: the lens given, as the clinician reads it
        assert any(s.message == f"Order so far, clearest first: {order[0] + 1}" for s in console_states)
