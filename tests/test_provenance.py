"""The software recorded with sessions and campaign runs: commit of a checkout, versions, labels."""

import hashlib
import subprocess
from importlib import metadata

import numpy as np
import pytest
import scipy

from lensopt.provenance import git_commit, software, software_label, source_diff, source_diff_name


def _git(folder, *args):
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path):
    """A git work tree holding a package folder ``pkg`` with one committed file."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    return tmp_path


def test_the_commit_of_a_checkout_is_git_s_head_and_marked_when_tracked_files_changed(checkout):
    head = _git(checkout, "rev-parse", "HEAD")
    assert git_commit(checkout / "pkg") == head
    (checkout / "pkg" / "new.py").write_text("untracked\n")  # an untracked file changes nothing run
    assert git_commit(checkout / "pkg") == head
    (checkout / "pkg" / "a.py").write_text("x = 2\n")
    assert git_commit(checkout / "pkg") == f"{head}+dirty"


def test_the_changes_of_a_modified_checkout_are_its_diff_which_git_applies_to_its_commit(checkout, tmp_path):
    """A change whose hunk ends on a blank line of context (a lone space) applies: the text is kept
    as git printed it, not stripped."""
    assert source_diff(checkout / "pkg") is None  # clean: no changes
    (checkout / "pkg" / "a.py").write_text("x = 1\n\n")
    _git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "two")
    (checkout / "pkg" / "a.py").write_text("x = 2\n\n")
    (checkout / "pkg" / "untracked.py").write_text("not run\n")
    diff = source_diff(checkout / "pkg")
    assert diff is not None and diff.endswith("+x = 2\n \n") and "untracked" not in diff
    assert source_diff_name(diff) == hashlib.sha256(diff.encode()).hexdigest()[:12] + ".diff"
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(checkout), str(clone)], check=True)
    (tmp_path / "changes.diff").write_text(diff)
    _git(clone, "apply", str(tmp_path / "changes.diff"))
    assert (clone / "pkg" / "a.py").read_text() == "x = 2\n\n"


def test_outside_a_checkout_there_is_no_commit(tmp_path):
    (tmp_path / "site-packages" / "lensopt").mkdir(parents=True)
    assert git_commit(tmp_path / "site-packages" / "lensopt") is None
    assert source_diff(tmp_path / "site-packages" / "lensopt") is None


def test_the_versions_are_the_installed_distributions(monkeypatch):
    found = software()
    assert found["numpy"] == np.__version__ and found["scipy"] == scipy.__version__
    assert found["dask"] == metadata.version("dask")
    found["numpy"] = "changed"
    assert software()["numpy"] == np.__version__  # each call a new dict: the cached one is safe


@pytest.mark.parametrize(
    ("found", "label"),
    [
        ({"lensopt": "0.1.0", "git_commit": None}, "0.1.0"),
        ({"lensopt": "0.1.0", "git_commit": "bca336b4b1ae6bc94e174393a624e2bb30ce5f15"}, "0.1.0 (git bca336b)"),
        ({"lensopt": "0.2.0", "git_commit": "0123456789abcdef+dirty"}, "0.2.0 (git 0123456, modified)"),
        ({}, "?"),
    ],
)
def test_a_software_label_names_the_version_and_short_commit(found, label):
    assert software_label(found) == label
