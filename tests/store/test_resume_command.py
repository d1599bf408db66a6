"""The command that continues a session names its database so that it works wherever it is read."""

import shlex

from lensopt.store import db_option, default_db_path, resume_command


def test_a_relative_database_is_named_by_its_absolute_path_quoted_for_a_shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = resume_command(7, "my sessions.db")
    assert shlex.split(command) == ["lensopt", "run", "--resume", "7", "--db", str(tmp_path / "my sessions.db")]


def test_the_default_database_is_named_too_so_that_the_command_works_in_any_shell(tmp_path, monkeypatch):
    """A session of $LENSOPT_DB resumed later in a shell without it (or with another) must not
    continue another database's session of that number."""
    monkeypatch.setenv("LENSOPT_DB", "kb.db")  # relative, as typed
    monkeypatch.chdir(tmp_path)
    assert resume_command(3, default_db_path()) == f"lensopt run --resume 3 --db {tmp_path / 'kb.db'}"
    assert db_option(None) == "" and resume_command(3) == "lensopt run --resume 3"


def test_the_window_options_of_the_run_come_before_the_database():
    assert (
        resume_command(3, "/data/s.db", " --no-fullscreen") == "lensopt run --resume 3 --no-fullscreen --db /data/s.db"
    )
