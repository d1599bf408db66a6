"""Checks of a protocol file that a stored session is not held to: settings a person wrote that the
session would ignore or could not honour (a GP-only field with the acuity-law rule, random first
trials that take every trial, an axis that is not a whole number of degrees, feedback asked of
a duel or ranking, a table or key another feedback mode reads, a name of more than one line).
:func:`lensopt.experiment.protocol.load_protocol`
refuses them in one line; a stored session's snapshot resumes as it ran. Also a ranking protocol's
rule and lens keys (:func:`check_ranking`), which every protocol is held to, and the hint of a
file TOML cannot read for a decimal comma (:func:`decimal_comma_hint`)."""

from __future__ import annotations

import re

from lensopt.experiment.protocol_sections import FeedbackSection, KeysSection, SimulatedSection
from lensopt.experiment.search_sections import (
    LensSection,
    OptimizerSection,
    RankingSection,
    StartSection,
    _ranking_rules,
)
from lensopt.refraction.acuity_law_settings import ACUITY_LAW_RULE
from lensopt.refraction.lens import diopter_text
from lensopt.refraction.prescription import PHOROPTER_MAX_POWER_D, SearchBox

#: The narrowest M half-width (D) a high start's box is narrowed to (:func:`lensopt.experiment.protocol_start.phoropter_start`):
#: a search of its spherical equivalent one phoropter step either way or more.
MIN_M_HALF_WIDTH_D = 0.25


def random_only_problem(optimizer: OptimizerSection, written: bool) -> str | None:
    """The one-line problem of a protocol file whose GP rule's random first trials
    (``[optimizer] n_initial``, written or its default) take every trial, else None (``lensopt bench``
    refuses ``--initial`` at or above ``--iterations`` too). Checked for files only: ``--trials``
    may run a short session of a shipped protocol, and a stored session resumes as it ran."""
    if optimizer.rule in (ACUITY_LAW_RULE, "random") or optimizer.n_initial < optimizer.trials:
        return None
    default = "" if written else ", its default"
    return (
        f"optimizer.n_initial ({optimizer.n_initial}{default}) is not below optimizer.trials ({optimizer.trials}): every "
        f"trial would be a random first one and optimizer.rule {optimizer.rule!r} would choose none; lower "
        "optimizer.n_initial or raise optimizer.trials"
    )


def fractional_axis_problem(lens: LensSection, simulated: SimulatedSection) -> str | None:
    """The one-line problem of an axis written in a protocol file that is not a whole number of
    degrees (``[lens] axis_deg``, ``[simulated] axis_deg``), else None: a phoropter's axis is set in
    whole degrees, and the lens shown would differ from the one stored. Checked for files only (a
    stored session resumes as it ran)."""
    none = {"lens": "0: not given", "simulated": "0: a patient without an axis"}
    for name, axis in (("lens", lens.axis_deg), ("simulated", simulated.axis_deg)):
        if axis != int(axis):
            return (
                f"{name}.axis_deg {axis:g} is not a whole number of degrees: write one from 1 to 180 "
                f"({none[name]}), e.g. {max(1, min(180, round(axis)))}"
            )
    return None


#: The ``[optimizer]`` fields only the GP rules use, and what they set.
GP_ONLY_FIELDS = {"inference": "the GP's inference", "n_initial": "the GP rules' random first trials"}


def ignored_optimizer_field(table: dict, rule: str, feedback_mode: str) -> str | None:
    """The one-line problem of an ``[optimizer]`` field written in a protocol file that ``rule`` would
    ignore (``inference`` and ``n_initial`` with the acuity-law rule, which has no GP; ``inference``
    with rankings, whose GP is variational), else None, as ``lensopt simulate`` refuses the same
    options. Checked for files only: a stored session's snapshot holds every field, their defaults
    included."""
    if feedback_mode == "ranking" and "inference" in table:
        return (
            "optimizer.inference sets the GP's inference (Laplace or EP), and ranking feedback fits its GP "
            "variationally (Nguyen et al. 2021) whatever it says; remove optimizer.inference"
        )
    if rule != ACUITY_LAW_RULE:
        if "accommodation_d" not in table:
            return None
        return (
            f"optimizer.accommodation_d sets the acuity-law optimizer's prior amplitudes of accommodation, "
            f"and optimizer.rule {rule!r} does not use it; remove optimizer.accommodation_d or choose rule "
            f"'{ACUITY_LAW_RULE}' (the full prescription, with a [start], finds the most-plus lens by itself)"
        )
    given = [name for name in GP_ONLY_FIELDS if name in table]
    if not given:
        return None
    return (
        f"optimizer.{given[0]} sets {GP_ONLY_FIELDS[given[0]]}, and optimizer.rule {rule!r} has no GP (grid Bayes "
        f"under the blur-acuity law); remove optimizer.{given[0]} or choose a GP rule such as 'ucb-ald'"
    )


def ignored_feedback_problem(feedback: FeedbackSection, feedback_mode: str) -> str | None:
    """The one-line problem of a duel or ranking protocol file that asks for feedback
    (``[feedback] enabled = true``): a comparison has no right answer to show, and the session
    would run without a word of it; else None."""
    if not feedback.enabled or feedback_mode == "letters":
        return None
    noun = {"duel": "a duel", "ranking": "a ranking"}.get(feedback_mode, f"a {feedback_mode} session")
    return (
        f"feedback.enabled = true applies to letter sessions only: {noun} has no right answer to show "
        f"(protocol.feedback = {feedback_mode!r}); set feedback.enabled = false"
    )


def foreign_table_problem(data: dict, feedback_mode: str) -> str | None:
    """The one-line problem of a protocol file with a ``[duel]`` or ``[ranking]`` table that its
    feedback mode does not read (a research-26afc copy given ``[duel] letters_per_line``): the
    session would run without a word of it; else None."""
    for table in ("duel", "ranking"):
        if table in data and feedback_mode != table:
            return (
                f"the [{table}] table applies to {table} protocols only (protocol.feedback = "
                f"{feedback_mode!r}); remove it, or set protocol.feedback = {table!r}"
            )
    return None


#: The ``[keys]`` each feedback mode's trials read (:mod:`lensopt.experiment.loop` and
#: :mod:`~lensopt.experiment.clinician_keys` for letters, :mod:`~lensopt.experiment.duel_loop`,
#: :mod:`~lensopt.experiment.ranking_loop`); a protocol file's other keys would go unread.
MODE_KEYS = {
    "letters": ("pass_key", "pause", "confirm", "quit", "undo", "lens_set", "note"),
    "duel": ("first", "second", "same", "pause", "confirm", "quit"),
    "ranking": ("lenses", "pause", "confirm", "quit"),
}


def foreign_key_problem(data: dict, feedback_mode: str) -> str | None:
    """The one-line problem of a protocol file whose ``[keys]`` table sets a key its feedback mode
    does not read (``same = "s"`` in a letters protocol): the person would press it and nothing
    would happen; else None. Checked for files only: a stored session resumes as it ran."""
    keys = data.get("keys")
    if not isinstance(keys, dict):
        return None
    for name in keys:
        if name in MODE_KEYS[feedback_mode]:
            continue
        owners = [mode for mode, names in MODE_KEYS.items() if name in names]
        if not owners:  # an unknown key: refused with the allowed keys before this check
            continue
        return (
            f"keys.{name} applies to {' and '.join(owners)} protocols only (protocol.feedback = "
            f"{feedback_mode!r}), so no trial would read it; remove it, or set protocol.feedback = {owners[0]!r}"
        )
    return None


def one_line_name_problem(name: str) -> str | None:
    """The one-line problem of a ``[protocol] name`` that is not one line of printable text (a TOML
    ``\n`` or a tab in it split the session's header, the log and the printed record), else None.
    Checked for files only: a stored session keeps the name it ran under."""
    bad = next((c for c in name if not c.isprintable()), None)
    if bad is None:
        return None
    return (
        f"protocol.name must be one line of text, got {name!r} (it holds {bad!r}); write it without line breaks or tabs"
    )


def phoropter_problem(start: StartSection | None) -> str | None:
    """The one-line problem of a starting refraction whose search box (``[start]`` half-widths)
    reaches lenses a phoropter cannot set (a principal meridian beyond ±
    :data:`~lensopt.refraction.prescription.PHOROPTER_MAX_POWER_D`), else None: the clinician
    would be asked for them and one could be prescribed. Checked for a new session (a protocol
    file, ``--start``); a stored session resumes as it ran."""
    if start is None or not start.given:
        return None
    if start.eyes:  # a start of each eye: each eye's box
        return next(
            (f"{eye}: {problem}" for eye in start.eyes if (problem := phoropter_problem(start.for_eye(eye)))), None
        )
    box = SearchBox(start.lens, start.m_half_width_d, start.j_half_width_d)
    reach = box.meridian_reach_d()
    if abs(reach) <= PHOROPTER_MAX_POWER_D + 1e-9:
        return None
    room = box.largest_m_half_width_d()
    fix = (
        f"narrow [start] m_half_width_d to {room:.2f} or less"
        if room >= 0.01
        else "narrow [start] j_half_width_d and m_half_width_d"
    )
    return (
        f"the search box around {start.lens.format()} (M ±{start.m_half_width_d:g} D, J0 and J45 "
        f"±{start.j_half_width_d:g} D) reaches {diopter_text(reach)} D in a meridian, beyond a phoropter's "
        f"±{PHOROPTER_MAX_POWER_D:g} D; {fix}, or refract this eye with trial lenses"
    )


def box_step_problem(start: StartSection | None, lens: LensSection) -> str | None:
    """The one-line problem of a ``[start]`` search box too narrow for the phoropter's steps
    (``[lens] step_d``), else None: an M half-width under one step (:data:`MIN_M_HALF_WIDTH_D`'s
    reason: a sphere one step either way) or a J half-width under half a step (a cylinder one step
    stronger or weaker changes J by half a step). Every lens asked for would round to the start's
    powers, and duels would compare x 180 with x 179. Continuous powers (``step_d = 0``) are not held
    to it."""
    if start is None or not lens.step_d:
        return None
    for name, half_width_d, least_d in (
        ("m_half_width_d", start.m_half_width_d, lens.step_d),
        ("j_half_width_d", start.j_half_width_d, lens.step_d / 2.0),
    ):
        if half_width_d < least_d - 1e-9:
            return (
                f"[start] {name} = {half_width_d:g} D is narrower than the phoropter's steps of "
                f"{lens.step_d:g} D allow (at least {least_d:g} D): nearly every lens asked for would be "
                f"the start's; widen it (the default is {getattr(StartSection, name):g} D)"
            )
    return None


def check_ranking(rule: str, ranking: RankingSection, keys: KeysSection) -> None:
    """A ranking protocol's rule ranks lenses and ``[keys] lenses`` names a key of its own for each of
    ``[ranking] lenses``; else a ValueError (:class:`lensopt.experiment.protocol.Protocol` makes it a
    one-line ProtocolError)."""
    rules = _ranking_rules()
    if rule not in rules:
        raise ValueError(
            f"optimizer.rule {rule!r} does not rank lenses; protocol.feedback = 'ranking' needs "
            f"one of {', '.join(map(repr, rules))}"
        )
    n = ranking.lenses
    if len(keys.lenses) < n:
        raise ValueError(f"keys.lenses names {len(keys.lenses)} keys but ranking.lenses = {n} needs one per lens")
    for name in ("pause", "confirm", "quit"):
        if getattr(keys, name) in keys.lenses[:n]:
            raise ValueError(
                f"keys.lenses and keys.{name} cannot share the key {getattr(keys, name)!r} "
                "(a lens needs a key of its own)"
            )


def toml_hint(raw: bytes, exc: Exception) -> str:
    """What a TOML error (tomllib's words: ``Cannot overwrite a value (at line 13, column 12)``)
    means in the line it names, and the fix: a key set twice (named, with both lines), a text value
    without its closing quote or without quotes, a key without a value, a JSON file; a decimal
    comma (:func:`decimal_comma_hint`); else nothing."""
    comma = decimal_comma_hint(raw, exc)
    where = re.search(r"at line (\d+)", str(exc))
    if comma or where is None:
        return comma
    lines = raw.decode("utf-8-sig", errors="replace").splitlines()
    number = int(where.group(1))
    line = lines[number - 1].split("#", 1)[0].strip() if 0 < number <= len(lines) else ""
    key = re.match(r"([A-Za-z0-9_-]+)\s*=\s*(.*)$", line)
    message = str(exc)
    if message.startswith("Cannot overwrite a value") and key:
        table, first = "", None
        for i, text in enumerate(lines[: number - 1], start=1):
            text = text.split("#", 1)[0].strip()
            header = re.fullmatch(r"\[([A-Za-z0-9_.-]+)\]", text)
            if header:
                table, first = header.group(1) + ".", None
            elif re.match(rf"{re.escape(key.group(1))}\s*=", text):
                first = i
        lines_text = f" (lines {first} and {number})" if first else ""
        return f"; {table}{key.group(1)} is set twice{lines_text}: keep one"
    declared = re.match(r"Cannot declare \(((?:'[^']*',? ?)+)\) twice", message)
    if declared:
        name = ".".join(re.findall(r"'([^']*)'", declared.group(1)))
        first = next(
            (i for i, text in enumerate(lines[: number - 1], start=1) if text.split("#", 1)[0].strip() == f"[{name}]"),
            None,
        )
        lines_text = f" (lines {first} and {number})" if first else ""
        return f"; the table [{name}] is written twice{lines_text}: keep one, with every key it needs"
    if message.startswith("Illegal character '\\n'") and line.count('"') % 2:
        return f'; the text value of line {number} has no closing quote: {line}"'
    if message.startswith("Invalid value") and key:
        if not key.group(2):
            return f"; {key.group(1)} has no value: give one (text in quotes, numbers as they are)"
        if re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*", key.group(2)) and key.group(2) not in ("true", "false"):
            return f'; text is written in quotes: {key.group(1)} = "{key.group(2)}"'
    if message.startswith("Invalid statement") and raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"{", b"[{")):
        return "; this is JSON, and a protocol is TOML: key = value lines under [tables], as in the shipped protocols (lensopt run --help names them)"
    return ""


def decimal_comma_hint(raw: bytes, exc: Exception) -> str:
    """``; use a decimal point: sphere_d = -2.25`` when the line a TOML error names writes a number
    with a decimal comma (``sphere_d = -2,25``, which TOML cannot read), else nothing."""
    where = re.search(r"at line (\d+)", str(exc))
    if where is None:
        return ""
    lines = raw.decode("utf-8-sig", errors="replace").splitlines()
    number = int(where.group(1))
    line = lines[number - 1].split("#", 1)[0].strip() if 0 < number <= len(lines) else ""
    if '"' in line or "'" in line or not re.search(r"=\s*[-+]?\d+,\d", line):
        return ""
    pointed = re.sub(r"(\d),(\d)", r"\1.\2", line)
    return f"; use a decimal point: {pointed}"
