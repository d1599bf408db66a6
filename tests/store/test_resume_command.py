"""The command that continues a session names its database so that it works wherever it is read."""

import os
import shlex

from lensopt.store import db_option, default_db_path, resume_command


def test_a_relative_database_is_named_by_its_absolute_path_quoted_for_a_shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = resume_command(7, "my sessions.db")
    assert shlex.split(command) == ["lensopt", "run", "--resume", "7", "--db", str(tmp_path / "my sessions.db")]


def test_the_default_database_is_not_named(tmp_path, monkeypatch):
    monkeypatch.setenv("LENSOPT_DB", str(tmp_path / "default.db"))
    assert default_db_path() == tmp_path / "default.db"
    assert resume_command(3, tmp_path / "default.db") == "lensopt run --resume 3"
    monkeypatch.chdir(tmp_path)
    assert db_option("default.db") == "" and db_option(None) == ""  # the same file, typed relative
    assert db_option("other.db") == f" --db {os.path.join(tmp_path, 'other.db')}"
