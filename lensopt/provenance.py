"""What software computed a result: recorded with every session start and resume, and every
campaign run, so that a number can be traced to the code and libraries that produced it.

:func:`software` gives a JSON-ready dict:

- ``lensopt``: the package version (``lensopt.__version__``);
- ``git_commit``: the commit of the lensopt checkout that ran, when lensopt runs from a git work
  tree (an editable install in a clone), with ``"+dirty"`` when its tracked files differ from that
  commit; ``None`` from an installed wheel (it carries no commit);
- ``source_diff``, of a ``+dirty`` checkout only: the name of its changes, ``git diff HEAD``, by their
  SHA-256 (``"3f2a9c01b7de.diff"``, :func:`source_diff_name`), which a campaign keeps in its folder
  (:func:`lensopt.bench.records.keep_source_diff`): runs made from two states of a modified
  checkout are two versions, and either can be rebuilt from its commit and its diff;
- ``python``, ``numpy``, ``scipy``, and the optional parts when installed (``psychopy``, from the
  ``psychopy-lib`` or ``psychopy`` distribution; ``PyQt5``, ``matplotlib``, ``dask``): their
  distributions' versions, read from their metadata (nothing is imported for it);
- ``blas``: the BLAS library numpy runs on (``"openblas 0.3.30 SkylakeX"``), from threadpoolctl:
  decisions computed on different BLAS kernels can differ in their last digits, which matters to
  anyone replaying a session decision for decision;
- ``platform``: the operating system and machine (``platform.platform()``).

Computed once per process (the git commands take a few milliseconds; a session reads it at its
start and at a resume, a campaign once per worker). numpy and threadpoolctl are imported when it is
first computed, not with this module: the store imports it, and ``lensopt --help`` imports the
store's names without numpy.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from lensopt import __version__

#: The distributions whose versions are recorded when installed (the first found of a tuple).
OPTIONAL_DISTRIBUTIONS = {
    "psychopy": ("psychopy-lib", "psychopy"),
    "PyQt5": ("PyQt5",),
    "matplotlib": ("matplotlib",),
    "dask": ("dask",),
}

#: Seconds the git commands may take before the commit is recorded as unknown.
GIT_TIMEOUT_S = 2.0


def _distribution_version(names: tuple[str, ...]) -> str | None:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def _git(checkout: Path, *args: str, strip: bool = True) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), *args],
            capture_output=True,
            encoding="utf-8",
            errors="replace",  # a file not in UTF-8 does not stop the record
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git on the machine, or it hung
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() if strip else done.stdout


def git_commit(package_dir: Path | None = None) -> str | None:
    """The commit of the git checkout holding ``package_dir`` (default: lensopt's own folder),
    ``"<sha>+dirty"`` when tracked files differ from it; None outside a checkout (an installed
    wheel) or without git."""
    checkout = _checkout_of(package_dir)
    if not (checkout / ".git").exists():  # a wheel in site-packages: no checkout of ours around it
        return None
    sha = _git(checkout, "rev-parse", "HEAD")
    if not sha:
        return None
    changes = _git(checkout, "status", "--porcelain", "--untracked-files=no")
    return f"{sha}+dirty" if changes else sha  # None (git status failed): not known to be modified


def _checkout_of(package_dir: Path | None) -> Path:
    return (Path(__file__).resolve().parent if package_dir is None else package_dir).parent


def source_diff(package_dir: Path | None = None) -> str | None:
    """The changes of the tracked files of the git checkout holding ``package_dir`` (default:
    lensopt's own folder) from its commit, as ``git diff HEAD`` prints them (``git apply`` takes
    them); None when there are none, outside a checkout, or without git."""
    checkout = _checkout_of(package_dir)
    if not (checkout / ".git").exists():
        return None
    text = _git(checkout, "diff", "HEAD", "--no-color", "--no-ext-diff", "--binary", strip=False)
    return text or None  # as printed: a hunk's last context line may be a lone space


@functools.cache
def _running() -> tuple[str | None, str | None]:
    commit = git_commit()
    return commit, (source_diff() if str(commit).endswith("+dirty") else None)


def running_diff() -> str | None:
    """The changes of the modified checkout this process runs from (:func:`source_diff` of a
    ``+dirty`` one; None otherwise), computed once with its commit: the diff :func:`software`
    names and a campaign keeps, the same text."""
    return _running()[1]


def source_diff_name(diff: str) -> str:
    """The file name of a :func:`source_diff`: the first 12 hex digits of its SHA-256, ``.diff``."""
    return hashlib.sha256(diff.encode("utf-8")).hexdigest()[:12] + ".diff"


def blas_library() -> str | None:
    """numpy's BLAS library: ``"<api> <version> <architecture>"`` (None if threadpoolctl finds none)."""
    import numpy  # noqa: F401  (loads its BLAS; deferred, see the module's docstring)
    from threadpoolctl import threadpool_info

    for info in threadpool_info():
        if info.get("user_api") == "blas":
            words = (info.get("internal_api"), info.get("version"), info.get("architecture"))
            return " ".join(str(w) for w in words if w)
    return None


@functools.cache
def _software() -> tuple[tuple[str, str | None], ...]:
    commit, diff = _running()
    found: dict[str, str | None] = {"lensopt": __version__, "git_commit": commit}
    if diff is not None:
        found["source_diff"] = source_diff_name(diff)
    found |= {
        "python": platform.python_version(),
        "numpy": _distribution_version(("numpy",)),
        "scipy": _distribution_version(("scipy",)),
    }
    for key, names in OPTIONAL_DISTRIBUTIONS.items():
        version = _distribution_version(names)
        if version is not None:
            found[key] = version
    found["blas"] = blas_library()
    found["platform"] = platform.platform()
    return tuple(found.items())


def software() -> dict[str, str | None]:
    """The software of this process (see the module's docstring); a new dict on every call."""
    return dict(_software())


def software_label(found: dict) -> str:
    """A short name of the software of :func:`software` (or of a stored copy): ``"0.1.0"``, with its
    commit when it ran from a checkout, ``"0.1.0 (git bca336b)"``, ``"0.1.0 (git bca336b, modified)"``."""
    version = str(found.get("lensopt") or "?")
    commit = found.get("git_commit")
    if not isinstance(commit, str) or not commit:
        return version
    sha, _, dirty = commit.partition("+")
    return f"{version} (git {sha[:7]}{', modified' if dirty else ''})"
