"""The parts of a run record that every campaign shares, and the record files of a campaign.

:func:`timed_session` runs the ask, answer, tell loop of a run (:func:`lensopt.asktell.run_session`)
and times its decisions; :func:`refraction_loop` is the loop of a refraction-like run and
:func:`lens_outcome` its lens fields; :func:`timing_summary` summarizes decision times and
:func:`versions` names the software. A campaign directory holds its manifest (:data:`MANIFEST_NAME`)
and one JSON record per run under ``runs/``, written atomically (:func:`write_json_atomic`); its
``commands`` are every command run into it, oldest first (:func:`manifest_commands`), its
``command`` the last one, whose plan the manifest's other fields describe.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from lensopt.asktell import run_session
from lensopt.bench.prescription_spec import CAMPAIGN as PRESCRIPTION_CAMPAIGN
from lensopt.bench.spec import CAMPAIGNS, RunSpec
from lensopt.provenance import running_diff, software, source_diff_name
from lensopt.store.claim import lock_holder

#: File name of a campaign's manifest (its settings and command), next to the run records.
MANIFEST_NAME = "campaign.json"

#: File name of the lock a command running a campaign holds on its folder, next to the manifest: one
#: command at a time runs into a folder (:func:`lensopt.bench.runner.run_campaign`).
LOCK_NAME = "campaign.lock"


def running_into(campaign_dir) -> str | None:
    """The process of the command running into ``campaign_dir`` now (holding its :data:`LOCK_NAME`),
    as its lock file names it; None when none does."""
    return lock_holder(Path(campaign_dir) / LOCK_NAME)


#: Record format tag.
RECORD_FORMAT = "lensopt.bench-run/1"


def versions() -> dict:
    """The software recorded with every run (:func:`lensopt.provenance.software`: versions, the git
    commit of a checkout, the BLAS library, the platform)."""
    return software()


def optimizer_settings(opt) -> dict:
    """The settings the rule ran with (defaults resolved), as JSON-ready data for a run record."""
    settings = opt.settings_dict() if hasattr(opt, "settings_dict") else asdict(opt.settings)
    return json.loads(json.dumps(settings, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)))


def timing_summary(samples_ms: list[float]) -> dict:
    a = np.asarray(samples_ms, dtype=float)
    return {"median": float(np.median(a)), "p95": float(np.percentile(a, 95)), "n": int(a.size)}


@dataclass(frozen=True)
class DecisionTimes:
    """The duration (ms) of each decision of a session — ask + answer + tell — on the wall clock and
    in CPU time of the deciding thread (the wall-clock time less the time spent waiting for a core,
    which other jobs on the machine lengthen)."""

    wall_ms: list[float]
    cpu_ms: list[float]


def timed_session(opt, respond: Callable, n_trials: int, after_trial: Callable) -> DecisionTimes:
    """:func:`lensopt.asktell.run_session` of ``opt`` for ``n_trials`` with ``respond``, calling
    ``after_trial(t, query, answer)`` after each tell; returns the times of each decision (ask +
    ``respond`` + tell, without ``after_trial``, which reports and checks, outside the timing)."""
    times = DecisionTimes([], [])
    mark, cpu_mark = time.perf_counter(), time.thread_time()

    def on_trial(t, query, answer):
        nonlocal mark, cpu_mark
        times.wall_ms.append(1e3 * (time.perf_counter() - mark))
        times.cpu_ms.append(1e3 * (time.thread_time() - cpu_mark))
        after_trial(t, query, answer)
        mark, cpu_mark = time.perf_counter(), time.thread_time()

    run_session(opt, respond, n_trials, on_trial=on_trial, stop=None)  # every trial, scored; the stop is recorded
    return times


def refraction_loop(spec: RunSpec, patient, opt, answer) -> dict:
    """The body of a refraction-like run: ``spec.n_iterations`` times ask, ``answer(trial)``, tell;
    the trajectory is the acuity error (logMAR) of ``opt.best()`` (every ``report_every``), and
    ``optimizer_settings`` the settings ``opt`` ran with (:func:`optimizer_settings`)."""
    trajectory, report_ms = [], []
    lens, value = None, None

    def report(t, _trial, _answer):
        nonlocal lens, value
        if spec.reports_after(t):
            t1 = time.perf_counter()
            lens = tuple(float(v) for v in opt.best())
            report_ms.append(1e3 * (time.perf_counter() - t1))
            value = float(patient.visual_acuity(*lens) - patient.best_acuity_logmar)
        trajectory.append(value)

    decision_ms = timed_session(opt, answer, spec.n_iterations, report).wall_ms
    return {
        **lens_outcome(patient, lens),
        "trajectory": trajectory,
        "timings_ms": {"decision": timing_summary(decision_ms), "report": timing_summary(report_ms)},
        "optimizer_settings": optimizer_settings(opt),
    }


def lens_outcome(patient, lens) -> dict:
    """The record fields of a refraction-like run that reported ``lens`` for ``patient``."""
    true_sphere, true_cylinder = (float(v) for v in patient.true_correction_d)
    return {
        "direction": "min",
        "optimal_value": 0.0,
        "final_point": list(lens),
        "true_correction_d": [true_sphere, true_cylinder],
        "sphere_error_d": abs(lens[0] - true_sphere),
        "cylinder_error_d": abs(lens[1] - true_cylinder),
    }


def write_json_atomic(path: Path, data: dict) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory and ``os.replace``."""
    write_text_atomic(path, json.dumps(data, indent=1) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` via a temp file in the same directory and ``os.replace``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: The folder of a campaign that keeps the changes of a modified checkout its runs were made from.
SOURCE_DIFFS = "source-diffs"


def keep_source_diff(campaign_dir) -> Path | None:
    """Keep the changes of the modified checkout this process runs from (``git diff HEAD``,
    :func:`lensopt.provenance.running_diff`) in ``campaign_dir``'s :data:`SOURCE_DIFFS` folder, named
    as the runs' ``versions`` name it (``source_diff``): a run record said ``+dirty`` and no more, so
    its figures could not be rebuilt. Returns its path; None from a clean checkout or a wheel."""
    diff = running_diff()  # the text software() names, computed once
    if diff is None:
        return None
    folder = Path(campaign_dir) / SOURCE_DIFFS
    folder.mkdir(exist_ok=True)
    path = folder / source_diff_name(diff)
    if not path.is_file():
        write_text_atomic(path, diff)
    return path


def record_path(out_dir: Path, spec: RunSpec) -> Path:
    return Path(out_dir) / "runs" / f"{spec.key}.json"


class NoRuns(ValueError):
    """A campaign folder without a finished run to summarize (no ``runs/``, or none of the campaign)."""


class SummaryNotWritten(ValueError):
    """A summary computed but not written (its folder is read-only, say): ``text``, the summary's
    text, is printed before the one-line error."""

    def __init__(self, message: str, text: str):
        super().__init__(message)
        self.text = text


def note_on_stderr(line: str) -> None:
    """Print a one-line note (a picture not drawn) on stderr, where it does not mix with a summary."""
    print(line, file=sys.stderr)


def read_json_file(path: Path, what: str, fix: str) -> dict:
    """The JSON object in ``path``; a cut-short or unreadable file is a one-line ValueError naming it,
    ``what`` it should be, and the ``fix``."""
    try:
        data = json.loads(Path(path).read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        reason = str(exc) if isinstance(exc, json.JSONDecodeError) else "not UTF-8 text"
        raise ValueError(f"{path} is not a complete {what} (cut short, or not JSON: {reason}); {fix}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a {what} (not a JSON object); {fix}")
    return data


def read_record(path: Path, command: str) -> dict:
    """A run record (:func:`read_json_file`): one cut short is deleted, or run again by the campaign's
    ``command`` (a run whose record does not read is not finished)."""
    # a stray file is not redone by the campaign's command: only deleting it helps
    fix = (
        f"delete it (a run of the campaign's own is then redone by its `{command}` command, the one in {MANIFEST_NAME})"
    )
    return read_json_file(path, "run record", fix)


def _has_key(record: dict, key: str) -> bool:
    """Whether ``record`` holds ``key``, a dotted path into its objects (``curves.blur_error_d``)."""
    value: object = record
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    return True


def check_record_keys(path: Path, record: dict, essential, command: str) -> None:
    """Refuse, in one line naming it and the fix, a run record without a key a summary rests on
    (``essential``, dotted paths into its objects: ``curves.blur_error_d``): a damaged record, edited
    by hand or written by something else. The other keys (when it ran, where, the software) are
    auxiliary: a summary says them unknown, or leaves them out."""
    missing = [key for key in essential if not _has_key(record, key)]
    if missing:
        raise ValueError(
            f"{path} is a damaged run record (it has no {', '.join(repr(k) for k in missing)}); delete it, then "
            f"run the campaign's `{command}` command again (the one in {MANIFEST_NAME}), which redoes it"
        )


def check_trajectory(path: Path, record: dict, command: str) -> None:
    """Refuse, in one line naming it and the fix (as :func:`check_record_keys`), a run record whose
    ``trajectory`` is not a non-empty list of numbers: the report said only "could not convert string
    to float: 'x'", or that a problem's trajectories differ in length, naming no file."""
    trajectory = record.get("trajectory")
    numbers = isinstance(trajectory, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in trajectory
    )
    if not (numbers and trajectory):
        raise ValueError(
            f"{path} is a damaged run record (its 'trajectory' is not a list of numbers); delete it, then "
            f"run the campaign's `{command}` command again (the one in {MANIFEST_NAME}), which redoes it"
        )


def load_record_files(out_dir: Path, command: str) -> list[tuple[Path, dict]]:
    """Every finished run record of a campaign directory with its file (sorted by key). ``command``:
    the campaign that writes such a directory, named in the error when there is none (a
    :class:`NoRuns`) or when a record is cut short (:func:`read_record`)."""
    runs = Path(out_dir) / "runs"
    if not runs.is_dir():
        raise NoRuns(
            f"{out_dir} holds no benchmark runs (no 'runs/' directory); run `{command} --out DIR` first, "
            "or give the folder it wrote"
        )
    return [(path, read_record(path, command)) for path in sorted(runs.glob("*.json"))]


def load_records(
    out_dir: Path, command: str = "lensopt bench functions|refraction", campaign: str | None = None, essential=()
) -> list[dict]:
    """Every finished run record of a campaign directory (sorted by key; :func:`load_record_files`).
    ``campaign``: every record must be of it (:func:`check_campaign_of`); then each must hold the
    ``essential`` keys (:func:`check_record_keys`)."""
    files = load_record_files(out_dir, command)
    if campaign is not None:
        kinds = {record.get("campaign") for _, record in files} - {None}
        # one campaign of another kind: the wrong command, not two campaigns in one folder
        if len(kinds) == 1 and kinds != {campaign}:
            (kind,) = kinds
            raise ValueError(
                f"{out_dir} holds a {kind} campaign, not a {campaign} one; summarize it with "
                f"`lensopt bench report {out_dir}`"
            )
        for path, record in files:
            check_campaign_of(path, record, campaign)
    for path, record in files:
        check_record_keys(path, record, essential, command)
    return [record for _, record in files]


def check_campaign_of(path: Path, record: dict, campaign: str) -> None:
    """Refuse, in one line naming it, a run record of another campaign than ``campaign`` (records
    written before records named their campaign pass)."""
    kind = record.get("campaign")
    if kind is not None and kind != campaign:
        raise ValueError(
            f"{path} is a run of the {kind} campaign in a folder of {campaign} runs: the folder holds two "
            "campaigns; move the runs of one into a folder of its own (runs/ and its campaign.json) and "
            "summarize each there"
        )


def read_manifest(campaign_dir, command: str) -> dict | None:
    """The manifest of a campaign directory (None without one); unreadable: a one-line ValueError."""
    path = Path(campaign_dir) / MANIFEST_NAME
    if not path.is_file():
        return None
    return read_json_file(path, "campaign manifest", f"run the campaign's `{command}` command again, which rewrites it")


def manifest_commands(manifest: dict) -> list[str]:
    """Every command run into a campaign's folder, oldest first: the manifest's ``commands``, or — a
    manifest written before it kept them — its one ``command``."""
    commands = manifest.get("commands")
    if isinstance(commands, list) and all(isinstance(c, str) for c in commands):
        return list(commands)
    command = manifest.get("command")
    return [command] if isinstance(command, str) and command else []


def not_written(out_dir, campaign_dir, exc: OSError, text: str) -> SummaryNotWritten:
    """The one-line error of a summary whose files could not be written in ``out_dir`` (a read-only
    folder): it is printed (``text``), and ``lensopt bench report DIR --out OTHER`` writes it elsewhere."""
    reason = exc.strerror or type(exc).__name__
    return SummaryNotWritten(
        f"the summary printed above could not be written in {out_dir} ({reason}); to keep its files, run "
        f"`lensopt bench report {shlex.quote(str(campaign_dir))} --out OTHER` with OTHER a folder you can write",
        text,
    )


def partial_line(campaign_dir, planned_keys) -> str | None:
    """A line saying that a campaign is unfinished — ``"2 of 18 runs of campaign.json finished: a
    partial summary"`` — when fewer of the runs its manifest planned (``planned_keys``, the run keys
    of its last command) have a record than were planned; None when all have (or nothing is known)."""
    if not planned_keys:
        return None
    runs = Path(campaign_dir) / "runs"
    finished = sum((runs / f"{key}.json").is_file() for key in planned_keys)
    if finished >= len(planned_keys):
        return None
    return f"{finished} of {len(planned_keys)} runs of {MANIFEST_NAME} finished: a partial summary"


def outside_plan_line(planned_keys, record_keys) -> str | None:
    """A line saying that a summary holds runs outside the plan of the manifest's last command
    (``planned_keys``): runs of an earlier command into the same folder (a wider one, or other rules);
    None when there are none (or nothing is known of the plan)."""
    if not planned_keys:
        return None
    keys = list(record_keys)
    outside = len(set(keys) - set(planned_keys))
    if not outside:
        return None
    return (
        f"{outside} of the {len(keys)} runs summarized are outside the plan of the last command in {MANIFEST_NAME} "
        "(runs of earlier commands into this folder, listed in its 'commands')"
    )


def plan_notes(campaign_dir, planned_keys, record_keys) -> dict[str, str]:
    """What a summary of a campaign folder is, when not just that of its manifest's last command
    (``planned_keys``): ``partial`` (:func:`partial_line`), ``outside_plan`` (:func:`outside_plan_line`),
    each only when it applies. Joined with "; ", they are the summary's first line."""
    notes = {
        "partial": partial_line(campaign_dir, planned_keys),
        "outside_plan": outside_plan_line(planned_keys, record_keys),
    }
    return {name: line for name, line in notes.items() if line}


def software_of(records) -> list[dict]:
    """The software that made the runs of ``records`` (each record's ``versions``: ``lensopt``,
    ``git_commit`` and, of a modified checkout, ``source_diff``: two states of one modified checkout
    are two), each with its number of runs, most first; a record without them counts as unknown."""
    counts: Counter = Counter()
    for record in records:
        versions = record.get("versions") if isinstance(record.get("versions"), dict) else {}
        key = (str(versions.get("lensopt") or "unknown"), versions.get("git_commit"), versions.get("source_diff"))
        counts[key] += 1
    return [
        {"lensopt": v, "git_commit": c, **({"source_diff": d} if d else {}), "n_runs": n}
        for (v, c, d), n in counts.most_common()
    ]


def mixed_software_line(software: list[dict]) -> str:
    """A summary's note when its runs were made by more than one lensopt (:func:`software_of`): a
    campaign resumed after a change mixed them, and said nothing; ``""`` for one."""
    if len(software) < 2:
        return ""

    def commit(made_by) -> str:
        text, diff = made_by["git_commit"], made_by.get("source_diff")
        if not text:
            return "no commit"
        dirty = "+dirty" if str(text).endswith("+dirty") else ""
        return str(text)[:7] + dirty + (f" ({SOURCE_DIFFS}/{diff})" if dirty and diff else "")

    made = ", ".join(f"{s['n_runs']} by {s['lensopt']} {commit(s)}" for s in software)
    return (
        f"the runs were made by {len(software)} versions of lensopt ({made}): a campaign resumed after a change "
        "mixes them; run its command into a new folder for one version's figures"
    )


def finish_summary(
    campaign_dir: Path,
    out_dir,
    records: list,
    summary: dict,
    *,
    command: str,
    planned_keys: Callable[[dict], list[str] | None],
    format_summary: Callable[[dict], str],
    names: tuple[str, str],
    draw: Callable[[list, Path], None],
    note: Callable[[str], None],
) -> tuple[dict, str]:
    """The end every campaign's summary shares: its manifest (:func:`read_manifest`, of ``command``'s
    campaigns) added to ``summary`` with what the summary is beside the plan of its last command
    (``planned_keys(manifest)``, :func:`plan_notes`: the text's first line), the text made
    (``format_summary``), then the summary JSON and its picture written in ``out_dir`` (default the
    campaign's folder) as ``names`` (summary, picture), ``draw(records, path)`` drawing the picture
    (without matplotlib ``note`` is told so in one line). Returns (summary, text); a folder that
    cannot be written is a :class:`SummaryNotWritten` holding the text."""
    summary_name, picture_name = names
    manifest = read_manifest(campaign_dir, command)
    notes: dict[str, str] = {}
    if manifest is not None:
        summary["campaign"] = manifest
        notes = plan_notes(campaign_dir, planned_keys(manifest), [r.get("key") for r in records])
        summary.update(notes)
    summary["software"] = software_of(records)  # which lensopt made the runs (a resume may mix them)
    mixed = mixed_software_line(summary["software"])
    if mixed:
        notes = {**notes, "mixed_software": mixed}
        summary["mixed_software"] = mixed
    text = format_summary(summary)
    if notes:
        text = "; ".join(notes.values()) + "\n" + text
    out_dir = campaign_dir if out_dir is None else Path(out_dir)  # ``lensopt bench report --out``
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out_dir / summary_name, summary)
        try:
            draw(records, out_dir / picture_name)
        except ImportError:  # matplotlib comes with lensopt[bench]
            note(f"{picture_name} not drawn: matplotlib is not installed (pip install 'lensopt[bench]')")
    except OSError as exc:  # a read-only folder: the summary is printed, and can be written elsewhere
        raise not_written(out_dir, campaign_dir, exc, text) from None
    return summary, text


def recorded_manifest(campaign_dir) -> dict | None:
    """The manifest in a campaign folder; None without one, or one that does not read (a command
    rewrites it; a summary names it, :func:`read_manifest`)."""
    try:
        recorded = json.loads((Path(campaign_dir) / MANIFEST_NAME).read_text())
    except (OSError, ValueError):
        return None
    return recorded if isinstance(recorded, dict) else None


def recorded_campaign(campaign_dir) -> tuple[str, str] | None:
    """The kind of campaign a folder holds and where that is said: its manifest's ``campaign``, or,
    without a manifest that says it (none, an old one, one cut short), its first readable run
    record's; None for a new folder (or records that do not say). Files that do not read are passed
    over: the summary, or the campaign's command, names them."""
    campaign_dir = Path(campaign_dir)
    recorded = (recorded_manifest(campaign_dir) or {}).get("campaign")
    if isinstance(recorded, str):
        return recorded, MANIFEST_NAME
    runs = campaign_dir / "runs"
    for path in sorted(runs.glob("*.json")) if runs.is_dir() else []:
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # cut short: rerun, or reported by the summary
        kind = record.get("campaign") if isinstance(record, dict) else None
        return (kind, f"runs/{path.name}") if isinstance(kind, str) else None
    return None


def campaign_command(campaign_dir, default: str) -> str:
    """The command that writes the kind of campaign a folder holds (:func:`recorded_campaign`), as
    errors name it — ``lensopt bench prescription`` —; ``default`` when the folder does not say."""
    recorded = recorded_campaign(campaign_dir)
    if recorded is None or recorded[0] not in (*CAMPAIGNS, PRESCRIPTION_CAMPAIGN):
        return default
    return f"lensopt bench {recorded[0]}"


def is_campaign_of(campaign_dir, campaign: str) -> bool:
    """Whether a campaign folder holds a ``campaign`` campaign (:func:`recorded_campaign`: its
    manifest says so, or, without a manifest that says it, its first readable record)."""
    recorded = recorded_campaign(campaign_dir)
    return recorded is not None and recorded[0] == campaign
