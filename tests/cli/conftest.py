"""Fixtures of the CLI's tests: ``user``, a user who cannot write the test's read-only folders
(``nobody`` through ``setpriv`` when the tests run as root, the test user itself otherwise), for
commands run on files and folders made read-only with ``chmod``."""

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_fit(monkeypatch):
    """Make any hyperparameter fit fail the test: a bad --output must be refused before fitting."""
    import lensopt.cli.handlers.hyperparameters as fits  # the handler's own names for the fits

    def forbidden(*args, **kwargs):
        raise AssertionError("the fit ran before --output was checked")

    monkeypatch.setattr(fits, "fit_reference_hyperparameters", forbidden)
    monkeypatch.setattr(fits, "fit_prescription_hyperparameters", forbidden)


class Unprivileged:
    """Runs commands as a user who cannot write the test's read-only folders."""

    def __init__(self, prefix: list[str], uid: int, gid: int, base: Path):
        self.prefix, self.uid, self.gid, self.base = prefix, uid, gid, base
        self.home = self.folder("home", private=True)
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("LENSOPT_", "XDG_", "MPL")) and key not in ("HOME", "PYTHONDONTWRITEBYTECODE")
        }
        self.env.update(
            HOME=str(self.home),
            MPLCONFIGDIR=str(self.home),
            XDG_RUNTIME_DIR=str(self.home),
            QT_QPA_PLATFORM="offscreen",
            PYTHONDONTWRITEBYTECODE="1",
        )

    def folder(self, name: str, private: bool = False) -> Path:
        """A new folder under the test's base that this user owns (writable by them)."""
        path = self.base / name
        path.mkdir()
        path.chmod(0o700 if private else 0o755)
        if os.geteuid() == 0:
            os.chown(path, self.uid, self.gid)
        return path

    def run(self, argv, timeout=120, unset=()) -> subprocess.CompletedProcess:
        """``argv`` run as this user; ``unset``: environment variables left out (``DISPLAY``)."""
        env = {key: value for key, value in self.env.items() if key not in unset}
        return subprocess.run([*self.prefix, *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)

    def lensopt(self, *args, unset=()) -> subprocess.CompletedProcess:
        return self.run([sys.executable, "-m", "lensopt", *map(str, args)], unset=unset)


def _drop_privileges_prefixes(uid: int, gid: int) -> list[list[str]]:
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return []
    plain = [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    # The interpreter may sit in root's own folder (pyenv under /root, 0700): then the user keeps the
    # capability to read and search folders, which grants no write (what these tests are about)
    reading = [*plain, "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    return [plain, reading]


@pytest.fixture(scope="module")
def user():
    base = Path(tempfile.mkdtemp(prefix="lensopt-readonly-"))
    base.chmod(0o755)
    try:
        if os.geteuid() != 0:
            candidates, uid, gid = [[]], os.getuid(), os.getgid()
        else:
            try:
                nobody = pwd.getpwnam("nobody")
            except KeyError:
                pytest.skip("no user 'nobody' to run the read-only commands as")
            uid, gid = nobody.pw_uid, nobody.pw_gid
            candidates = _drop_privileges_prefixes(uid, gid)
        locked = base / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        probe = f"import lensopt.cli, numpy; open({str(locked / 'x')!r}, 'w')"
        for prefix in candidates:
            found = Unprivileged(prefix, uid, gid, base)
            result = found.run([sys.executable, "-c", probe], timeout=60)
            if "PermissionError" in result.stderr and "Traceback" in result.stderr:
                yield found
                return
            shutil.rmtree(found.home)
        pytest.skip("cannot run Python as a user who cannot write a 0555 folder on this platform")
    finally:
        for folder in [base, *[p for p in base.rglob("*") if p.is_dir()]]:
            folder.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
