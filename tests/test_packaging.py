"""A wheel that works (issue 15, item 5): package data inside, installs, runs from elsewhere; a fast --help.

The wheel is built once per run from a copy of the source files (the repository gets no build/ or
egg-info), with the build backend of this environment and no download. It is installed into a
fresh virtual environment whose only view of this one is a ``.pth`` line to its site-packages (the
dependencies: numpy, scipy, PsychoPy...); that line adds a folder to ``sys.path`` without running
its ``.pth`` files, so the editable install of this repository is not seen and ``lensopt`` comes
from the wheel, as the tests check.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())

#: What the wheel must carry besides the code, as the repository holds it (folder, pattern).
SHIPPED = {
    "lensopt/data": ("data", "*.json"),
    "lensopt/stimuli": ("stimuli", "*.toml"),
    "lensopt/protocols": ("protocols", "*.toml"),
}

#: Modules that `lensopt --help` must not import (each costs tenths of a second).
HEAVY = ("numpy", "scipy", "psychopy", "PyQt5", "dask", "distributed", "matplotlib", "tqdm", "threadpoolctl")


# --- the package list and the data mapping ---------------------------------------------------------


def test_pyproject_lists_every_package_and_maps_the_data_folders():
    setuptools = PYPROJECT["tool"]["setuptools"]
    mapped = setuptools["package-dir"]
    assert mapped == {"lensopt.data": "data", "lensopt.stimuli": "stimuli", "lensopt.protocols": "protocols"}
    code = [".".join(init.parent.relative_to(REPO).parts) for init in (REPO / "lensopt").rglob("__init__.py")]
    assert sorted(setuptools["packages"]) == sorted(code + list(mapped)), (
        "pyproject.toml [tool.setuptools] packages must list every package under lensopt/ "
        "(a new package left out is missing from the wheel)"
    )
    for folder in mapped.values():
        assert (REPO / folder / "__init__.py").is_file()  # editable installs need a regular package


def test_requires_python_is_true_to_the_code():
    # the code imports tomllib unconditionally (3.11+); no tomli fallback is left behind
    assert PYPROJECT["project"]["requires-python"].startswith(">=3.11")
    assert not any(d.startswith("tomli") for d in PYPROJECT["project"]["dependencies"])


def test_the_data_is_found_through_importlib_resources():
    from importlib import resources

    from lensopt.experiment.optotypes import DEFAULT_LETTERS_PATH
    from lensopt.reference_data import DATA_DIR, PROTOCOLS_DIR, STIMULI_DIR, load_json, source_data_dir

    assert DATA_DIR == Path(str(resources.files("lensopt.data")))
    assert (DATA_DIR / "refraction-hyperparameters.json").is_file()
    assert load_json("refraction-hyperparameters.json")["kernel"]
    assert DEFAULT_LETTERS_PATH == STIMULI_DIR / "letters-5x5.toml" and DEFAULT_LETTERS_PATH.is_file()
    assert (PROTOCOLS_DIR / "demo-simulated.toml").is_file()
    # this test suite runs on the editable install: the repository's own folders, writable
    assert DATA_DIR.resolve() == (REPO / "data").resolve()
    assert source_data_dir() == DATA_DIR


def test_a_shipped_protocol_is_found_by_name_from_any_folder(tmp_path, monkeypatch):
    from lensopt.errors import ProtocolError
    from lensopt.experiment.protocol import load_protocol, resolve_protocol_path, shipped_protocols

    monkeypatch.chdir(tmp_path)
    assert "demo-simulated" in shipped_protocols() and "clinical-refraction" in shipped_protocols()
    assert load_protocol("demo-simulated").protocol.name == "demo-simulated"
    for path in ("demo-simulated.toml", "protocols/demo-simulated.toml", "elsewhere/demo-simulated.toml"):
        # a path is a path: one that does not exist is refused, never replaced by the shipped file
        with pytest.raises(ProtocolError, match="not found; check the path, or give the bare name demo-simulated"):
            load_protocol(path)
    own = tmp_path / "demo-simulated.toml"  # a file of that name here is used as given
    own.write_text("")
    assert resolve_protocol_path("demo-simulated.toml") == Path("demo-simulated.toml")
    with pytest.raises(ProtocolError, match=r"not found.*demo-simulated"):
        load_protocol("no-such-protocol")


@pytest.mark.parametrize(
    ("argv", "option"),
    [(["hyperparameters", "--patients", "1"], "--output"), (["bench", "rescale", "--samples", "2"], "--out")],
)
def test_commands_that_regenerate_shipped_data_need_an_output_when_lensopt_is_installed(
    argv, option, monkeypatch, capsys
):
    """An installed lensopt's data files are not rewritten in place (``bench rescale`` rewrote the
    shipped rescaling table, and every later ``bench functions`` failed on the partial table)."""
    import lensopt.reference_data as reference_data
    from lensopt.bench.reference_table import DEFAULT_TABLE_PATH
    from lensopt.cli import main

    before = DEFAULT_TABLE_PATH.read_bytes()
    monkeypatch.setattr(reference_data, "source_data_dir", lambda: None)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"give {option} FILE" in err[0], err
    assert DEFAULT_TABLE_PATH.read_bytes() == before


# --- lensopt --help -----------------------------------------------------------------------------


def test_help_imports_no_heavy_module():
    code = (
        "import sys; from lensopt.cli import build_parser; p = build_parser(); p.format_help(); "
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "", f"`lensopt --help` imports {out.strip()}; import it inside the command's handler"


def test_help_literals_equal_the_constants():
    from lensopt.bench import prescription_spec
    from lensopt.bench.preferential import DUEL_CAMPAIGNS, DUEL_DEFAULTS
    from lensopt.bench.robustness import CONDITIONS, EXTRA_CONDITIONS, ROBUSTNESS_RULES
    from lensopt.bench.runner import HELD_OUT_FIRST_SEED
    from lensopt.binary.settings import ALL_RULES, INFERENCE_METHODS, PAPER_BETA
    from lensopt.cli import defaults, simulate
    from lensopt.experiment.protocol import shipped_protocols
    from lensopt.observer import SimulatedPatient
    from lensopt.observer.patient import PATIENT_SLOPE_PER_LOGMAR
    from lensopt.observer.population import CLINIC_SLOPE_PER_LOGMAR
    from lensopt.preference import CONTEXTUAL_RULES
    from lensopt.refraction.acuity_law_settings import ACUITY_LAW_RULE
    from lensopt.refraction.letters import DEFAULT_MODEL_LAPSE, LETTER_BETA, REFRACTION_BETA
    from lensopt.stopping import DEFAULT_MIN_TRIALS, DEFAULT_STOP_CONFIDENCE

    assert defaults.ALL_RULES == ALL_RULES
    assert defaults.ACUITY_LAW_RULE == ACUITY_LAW_RULE
    assert defaults.INFERENCE_METHODS == INFERENCE_METHODS
    assert defaults.CONTEXTUAL_DUEL_RULES == CONTEXTUAL_RULES
    assert defaults.LETTER_BETA == LETTER_BETA
    assert defaults.REFRACTION_BETA_3 == round(REFRACTION_BETA, 3)
    assert defaults.PAPER_BETA_3 == round(PAPER_BETA, 3)
    assert defaults.DEFAULT_MODEL_LAPSE == DEFAULT_MODEL_LAPSE
    assert defaults.PATIENT_SLOPE == PATIENT_SLOPE_PER_LOGMAR == SimulatedPatient(0.0, 0.0).slope
    assert defaults.CLINIC_SLOPE == CLINIC_SLOPE_PER_LOGMAR == prescription_spec.DEFAULT_SLOPE
    assert defaults.DUEL_DEFAULTS == DUEL_DEFAULTS and list(defaults.DUEL_DEFAULTS) == list(DUEL_CAMPAIGNS)
    assert defaults.ROBUSTNESS_CONDITIONS == tuple((c.name, c.n_patients, c.n_trials) for c in CONDITIONS)
    assert defaults.ROBUSTNESS_EXTRA_CONDITIONS == tuple((c.name, c.n_patients, c.n_trials) for c in EXTRA_CONDITIONS)
    assert defaults.ROBUSTNESS_RULES == ROBUSTNESS_RULES
    assert defaults.HELD_OUT_FIRST_SEED == HELD_OUT_FIRST_SEED
    assert sorted(defaults.SHIPPED_PROTOCOLS) == shipped_protocols()
    assert (simulate.DEFAULT_STOP_CONFIDENCE, simulate.DEFAULT_MIN_TRIALS) == (
        DEFAULT_STOP_CONFIDENCE,
        DEFAULT_MIN_TRIALS,
    )


def test_the_defaults_a_session_gets_are_the_real_ones(monkeypatch, capsys):
    import lensopt.cli.handlers.bench as bench_campaigns
    from lensopt.cli import build_parser, main
    from lensopt.refraction.letters import LETTER_BETA, REFRACTION_BETA, RefractionOptimizer

    # simulate leaves β to the optimizer, whose default the help names
    args = build_parser().parse_args(["simulate"])
    assert args.beta is None and args.model_lapse is None
    assert RefractionOptimizer(seed=0).settings.beta == LETTER_BETA
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", "--help"])
    assert exit_.value.code == 0
    assert f"(default {LETTER_BETA:g}, issue 14's letter model" in " ".join(capsys.readouterr().out.split())
    # bench refraction: the handler fills in Φ⁻¹(0.99) itself, exactly
    seen = {}
    monkeypatch.setattr(bench_campaigns, "_run", lambda args, campaign, specs, manifest: seen.update(manifest) or 0)
    assert main(["bench", "refraction", "--seeds", "1", "--slopes", "5", "--rules", "ucb-ald"]) == 0
    assert seen["beta"] == REFRACTION_BETA


def test_cli_startup_benchmark_reports_median_and_p95(capsys):
    from lensopt.cli import main

    assert main(["bench", "cli-startup", "--runs", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["runs"] == 2 and 0 < result["min_s"] <= result["median_s"] <= result["p95_s"] <= result["max_s"]
    assert result["command"][-1] == "--help"


# --- the wheel ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of the source files."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    for folder in ("lensopt", "data", "stimuli", "protocols"):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    # with setuptools here (a 3.11 venv has it), no build isolation: nothing to download
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation", "--no-index"]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", *isolation, "-q", "-w", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (found,) = out.glob("lensopt-*.whl")
    return found


def test_the_wheel_carries_the_stimuli_the_reference_data_and_the_protocols(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for target, (folder, pattern) in SHIPPED.items():
        files = sorted((REPO / folder).glob(pattern))
        assert files, folder
        for path in files:
            assert f"{target}/{path.name}" in names, f"{folder}/{path.name} is not in the wheel"
        assert f"{target}/__init__.py" in names
    assert "lensopt/reference_data.py" in names and "lensopt/cli/__init__.py" in names
    assert not any(n.startswith(("data/", "stimuli/", "protocols/", "tests/")) for n in names)


def test_the_wheel_carries_the_licence(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names


def _tracked() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True)
    return [name for name in done.stdout.split("\0") if name and (REPO / name).is_file()]


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> tuple[set[str], Path]:
    """``python -m build --sdist`` of a copy of the tracked files, the docs' archived results too (so
    that MANIFEST.in is seen to leave them out): the archive's file names, and an unpacked copy."""
    src = tmp_path_factory.mktemp("sdist-src")
    for name in _tracked():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, src / name)
    out = tmp_path_factory.mktemp("sdist")
    build = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", build, str(out)], cwd=src, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    (archive,) = out.glob("lensopt-*.tar.gz")
    unpacked = tmp_path_factory.mktemp("sdist-unpacked")
    with tarfile.open(archive) as tar:
        names = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}
        tar.extractall(unpacked, filter="data")
    (root,) = unpacked.iterdir()
    return names, root


def docs_paths_the_tests_name() -> tuple[set[str], list[str]]:
    """The docs files and folders that the tests name by a literal path, ``REPO / "docs" / "a.md"``
    or ``"docs/a.md"``, and where a test builds a docs path that is not literal (unchecked)."""
    named: set[str] = set()
    unresolved: list[str] = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path.name == "test_packaging.py":  # it names docs files as the archive's contents, reads none
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inner: set[int] = set()  # the left operands of a chain a / b / c, seen with the whole chain
        for node in ast.walk(tree):  # breadth first: a chain comes before its left operands
            if id(node) in inner:
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.fullmatch(r"docs/[\w./-]*[\w.]", node.value):
                    named.add(node.value)
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                parts: list[ast.expr] = []
                while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                    inner.add(id(node))
                    parts.insert(0, node.right)
                    node = node.left
                parts.insert(0, node)
                texts = [p.value if isinstance(p, ast.Constant) and isinstance(p.value, str) else None for p in parts]
                if "docs" not in texts:
                    continue
                tail = texts[texts.index("docs") :]
                if None in tail:
                    unresolved.append(f"{path.relative_to(REPO)}:{parts[0].lineno}")
                else:
                    named.add("/".join(t for t in tail if t is not None))
    return named, unresolved


def test_the_docs_paths_of_the_tests_are_found_by_the_scan():
    named, unresolved = docs_paths_the_tests_name()
    assert not unresolved, (
        f"write these docs paths whole (literal), so that the source archive is checked: {unresolved}"
    )
    assert {"docs/python-api.md", "docs/protocols.md", "docs/results/prescription/commands.txt"} <= named


def test_the_source_archive_carries_every_test_and_the_licence(sdist):
    """Its tests run from it, so every tracked file of tests/ is in it, conftests and golden files too."""
    names, _ = sdist
    tests = {n for n in _tracked() if n.startswith("tests/")}
    assert tests and not tests - names, sorted(tests - names)[:10]
    assert {"LICENSE", "plugins/psychopy-lensopt/pyproject.toml", "docs/examples/psychopy_handler.py"} <= names
    assert "__pycache__" not in " ".join(names)


def test_the_source_archive_carries_every_docs_file_the_tests_read_and_not_the_archived_results(sdist):
    """test_examples.py read docs/python-api.md as it was collected, so an unpacked archive's tests
    did not even collect; docs/protocols.md and a results file are read by tests too."""
    names, _ = sdist
    tracked = _tracked()
    named, _ = docs_paths_the_tests_name()
    needed = {n for n in tracked for p in named if n == p or n.startswith(p + "/")}
    assert needed, named
    assert not needed - names, sorted(needed - names)
    results = {n for n in names if n.startswith("docs/results/")}
    assert results <= needed, sorted(results - needed)  # the archived results (44 MB) stay out
    assert not any(n.startswith("docs/images/") for n in names)


@pytest.mark.slow
def test_the_unpacked_source_archive_collects_its_tests(sdist):
    """Every test module of the archive imports and is collected, with the archive's own lensopt."""
    _, root = sdist
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(root)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith(("ERROR", "E "))]
    assert done.returncode == 0, errors[:10] or (done.stdout + done.stderr)[-3000:]
    probe = "import lensopt, sys; print(lensopt.__file__)"
    where = subprocess.run([sys.executable, "-c", probe], cwd=root, env=env, capture_output=True, text=True)
    assert Path(where.stdout.strip()).resolve().is_relative_to(root.resolve()), where.stdout + where.stderr


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel installed (``bin/`` folder)."""
    env = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    bin_dir = env / "bin"
    site = Path(
        subprocess.run(
            [bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "lensopt-test-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(bin_dir / "python"),
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return bin_dir


def _run(installed, tmp_path, *args, timeout=300):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["LENSOPT_DB"] = str(tmp_path / "sessions.db")
    return subprocess.run(
        [str(a) for a in args], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_the_installed_wheel_reads_its_own_data(installed, tmp_path):
    code = (
        "import lensopt, json; from lensopt.reference_data import DATA_DIR, PROTOCOLS_DIR, source_data_dir; "
        "from lensopt.experiment.optotypes import DEFAULT_LETTERS_PATH, load_glyphs; "
        "from lensopt.experiment.protocol import load_protocol; "
        "print(json.dumps([lensopt.__file__, str(DATA_DIR), str(DEFAULT_LETTERS_PATH), str(PROTOCOLS_DIR), "
        "source_data_dir() is None, len(load_glyphs()), load_protocol('demo-simulated').protocol.name]))"
    )
    done = _run(installed, tmp_path, installed / "python", "-c", code)
    assert done.returncode == 0, done.stderr[-3000:]
    package, data, letters, protocols, installed_copy, n_glyphs, demo = json.loads(done.stdout)
    root = installed.parent.resolve()
    for path in (package, data, letters, protocols):
        assert Path(path).resolve().is_relative_to(root), f"{path} is not inside the fresh environment"
    assert installed_copy and n_glyphs == 26 and demo == "demo-simulated"


def test_the_installed_lensopt_simulates_from_another_folder(installed, tmp_path):
    done = _run(installed, tmp_path, installed / "lensopt", "simulate", "--trials", "3", "--seed", "1", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["trials"] == 3 and result["seed"] == 1 and len(result["best_lens_d"]) == 2
    done = _run(installed, tmp_path, installed / "lensopt", "hyperparameters")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "give --output FILE" in done.stderr


@pytest.mark.display
@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (run under xvfb-run)")
def test_the_installed_lensopt_runs_the_demo_protocol_by_name(installed, tmp_path):
    done = _run(
        installed,
        tmp_path,
        installed / "lensopt",
        "run",
        "--protocol",
        "demo-simulated",
        "--participant",
        "wheel",
        "--seed",
        "1",
        "--trials",
        "2",
        "--db",
        tmp_path / "demo.db",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 trials stored" in done.stdout, done.stdout[-2000:]
