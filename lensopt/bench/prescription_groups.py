"""How a prescription campaign's runs are grouped, labelled and ordered (a setting, a feedback, a rule
with its variants), and the agreement of a group with the truth (:func:`bland_altman`): shared by the
summary's tables (:mod:`lensopt.bench.prescription_summary`) and its plot
(:mod:`lensopt.bench.prescription_plot`)."""

from __future__ import annotations

import numpy as np

from lensopt.bench.prescription_spec import PRESCRIPTION_DUEL_RULES, PRESCRIPTION_RULES, SETTINGS

#: z of the 95 % limits of agreement.
LOA_Z = 1.96


def bland_altman(differences) -> dict:
    """Bias (mean difference), SD (``n − 1``) and the 95 % limits of agreement ``bias ± 1.96 SD``
    (None for the SD and the limits with fewer than two values)."""
    d = np.asarray(differences, dtype=float)
    bias = float(np.mean(d))
    if d.size < 2:
        return {"n": int(d.size), "bias": bias, "sd": None, "loa_low": None, "loa_high": None}
    sd = float(np.std(d, ddof=1))
    return {"n": int(d.size), "bias": bias, "sd": sd, "loa_low": bias - LOA_Z * sd, "loa_high": bias + LOA_Z * sd}


def setting_order(name: str):
    """Sort key of a setting: the order of :data:`SETTINGS`, unknown ones after, by name."""
    order = {s.name: i for i, s in enumerate(SETTINGS)}
    return (order.get(name, 99), name)


def rule_order(rule: str):
    """Sort key of a rule name (its variants after it): the letter rules, then the duel rules, then others."""
    order = {r: i for i, r in enumerate(PRESCRIPTION_RULES + PRESCRIPTION_DUEL_RULES)}
    return (order.get(rule.split(" ")[0], 99), rule)


def feedback_of(record: dict) -> str:
    """The record's feedback mode (``letters`` for a record that does not say it)."""
    return record.get("feedback") or "letters"


def rule_name(record: dict) -> str:
    """The record's rule, with its travel limit if it ran under one (``bracket-ald step≤0.5``), its
    stopping rule's check through the lens (``bracket-ald check5``: 5 letters), a trial frame's axis
    step (``bracket-ald axis5°``), the duel patients'
    tie threshold and how "the same" was told when set (``muc-ald ties<1 same:dropped``): a campaign
    directory may hold the same rule with and without them, on the same patients."""
    step, ties, same = record.get("max_step_d"), record.get("tie_threshold"), record.get("same_answers")
    rule = record["rule"] if step is None else f"{record['rule']} step≤{step:g}"
    if record.get("check_letters"):
        rule += f" check{record['check_letters']}"
    if record.get("axis_step_deg"):
        rule += f" axis{record['axis_step_deg']:g}°"
    if ties:
        rule += f" ties<{ties:g}"
    return rule if same is None else f"{rule} same:{same}"


def group_order(key: tuple[str, str, str]):
    """Sort key of a (setting, feedback, rule) group: by setting, letters first, then by rule."""
    setting, feedback, rule = key
    return (setting_order(setting), feedback != "letters", feedback, rule_order(rule))


def rule_label(row: dict) -> str:
    """A row's rule as the tables show it: the rule, and its feedback unless letters (``muc-ald (duel)``)."""
    feedback = feedback_of(row)
    return rule_name(row) if feedback == "letters" else f"{rule_name(row)} ({feedback})"
