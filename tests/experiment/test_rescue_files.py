"""The rescue files (lensopt.experiment.rescue): where an answer the database refused is kept, and how
a resume reads them back — without a window: a stand-in store and mode, the files real."""

import dataclasses
import json
import os
import stat

import pytest

from lensopt.errors import StoreError
from lensopt.experiment import rescue
from lensopt.experiment.rescue import recorder, recover_rescued, rescue_path, rescue_paths, sessions_with_rescue_files


@dataclasses.dataclass(frozen=True)
class Answer:
    index: int
    letter: str
    correct: bool


class Refusing:
    """A store that refuses every answer, as a locked or full database does."""

    def append_trial(self, session_id, record):
        raise StoreError("database s.db: database or disk is full")


class Stored:
    """A mode over an in-memory store: its answers, in order."""

    record_type = Answer

    def __init__(self, *answers):
        self.answers = list(answers)

    def stored_trials(self, store, session_id):
        return list(self.answers)

    def append(self, store, session_id, record):
        self.answers.append(record)


def test_an_answer_the_database_and_its_folder_refuse_goes_to_the_fallback_file_privately(tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")  # a file where the folder would be: writing beside it fails, as a full disk does
    fallback = tmp_path / "elsewhere" / "s.db.session-1.unsaved.jsonl"
    record = recorder(Refusing(), 1, [blocked / "s.db.session-1.unsaved.jsonl", fallback])
    with pytest.raises(StoreError, match=rf"disk is full \(trial 4 was saved to {fallback}\)$"):
        record(Answer(4, "K", False))
    assert json.loads(fallback.read_text()) == {"index": 4, "letter": "K", "correct": False}
    assert stat.S_IMODE(fallback.stat().st_mode) == 0o600  # a patient's answers: as private as the database
    assert stat.S_IMODE(fallback.parent.stat().st_mode) == 0o700


def test_an_answer_no_rescue_file_takes_is_written_on_the_one_error_line(tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    files = [blocked / "a.jsonl", blocked / "b.jsonl"]
    with pytest.raises(StoreError) as refused:
        recorder(Refusing(), 1, files)(Answer(6, "Z", True))
    message = str(refused.value)
    assert "\n" not in message and "could not be saved to a rescue file either" in message
    assert f"put it, as one line, in {files[0]}" in message
    assert json.loads(message.rsplit("resume: ", 1)[1]) == {"index": 6, "letter": "Z", "correct": True}
    assert not list(tmp_path.glob("**/*.jsonl"))  # no empty file left behind


def test_a_resume_reads_both_places_and_keeps_every_file_under_a_name_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(rescue.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    db = tmp_path / "s.db"
    beside, fallback = rescue_paths(db, 2)
    assert beside == rescue_path(db, 2) and fallback.parent == tmp_path / "tmp" / f"lensopt-rescue-{os.getuid()}"
    assert rescue_paths(tmp_path / "other" / "s.db", 2)[1] != fallback  # another database of that name
    mode, lines = Stored(Answer(1, "A", True)), []
    record = recorder(Refusing(), 2, [beside, fallback])
    with pytest.raises(StoreError, match="trial 2 was saved to "):
        record(Answer(2, "B", False))
    beside.chmod(0o600)
    fallback.parent.mkdir(mode=0o700, parents=True)
    fallback.write_text(json.dumps(dataclasses.asdict(Answer(3, "C", True))) + "\n")
    assert recover_rescued(None, mode, 2, rescue_paths(db, 2), lines.append) == 2
    assert [a.index for a in mode.answers] == [1, 2, 3]
    assert not beside.exists() and not fallback.exists()
    assert (tmp_path / "s.db.session-2.recovered.jsonl").exists()
    # a later recovery of the same session keeps the earlier file: data is never deleted
    beside.write_text(json.dumps(dataclasses.asdict(Answer(4, "D", False))) + "\n")
    assert recover_rescued(None, mode, 2, rescue_paths(db, 2), lines.append) == 1
    assert (tmp_path / "s.db.session-2.recovered-2.jsonl").exists()
    assert (tmp_path / "s.db.session-2.recovered.jsonl").read_text().startswith('{"index": 2')


def test_a_last_line_cut_short_is_left_out_and_a_bad_line_before_it_is_refused(tmp_path):
    path = tmp_path / "s.db.session-1.unsaved.jsonl"
    whole = json.dumps(dataclasses.asdict(Answer(2, "B", True)))
    path.write_text(whole + "\n" + whole.replace("2", "3", 1)[:15])  # killed while writing trial 3
    mode, lines = Stored(Answer(1, "A", True)), []
    assert recover_rescued(None, mode, 1, [path], lines.append) == 1
    assert [a.index for a in mode.answers] == [1, 2]
    assert any("last line" in line and "cut short" in line for line in lines)
    assert whole in (tmp_path / "s.db.session-1.recovered.jsonl").read_text()  # the file kept, as it was
    bad = tmp_path / "s.db.session-5.unsaved.jsonl"
    bad.write_text("{not json\n" + whole + "\n")
    with pytest.raises(StoreError, match=r"line 1 of the rescue file .* correct or delete that line"):
        recover_rescued(None, Stored(Answer(1, "A", True)), 5, [bad], lines.append)
    assert bad.exists()


def test_the_fallback_folder_must_be_this_users_own_and_its_file_no_link(tmp_path, monkeypatch):
    """The temporary folder is shared: a folder of that name made by another user, or open to others,
    is not used, nor a link planted where the answers would go (the answer is then on the error line)."""
    monkeypatch.setattr(rescue.tempfile, "gettempdir", lambda: str(tmp_path))
    beside, fallback = rescue_paths(tmp_path / "gone" / "s.db", 1)
    blocked = tmp_path / "gone"
    blocked.write_text("")  # the database's folder refuses: the fallback is tried
    fallback.parent.mkdir(mode=0o777)
    fallback.parent.chmod(0o777)  # open to every user
    with pytest.raises(StoreError, match="can be written by other users"):
        recorder(Refusing(), 1, [beside, fallback])(Answer(2, "B", True))
    fallback.parent.chmod(0o700)
    elsewhere = tmp_path / "elsewhere.jsonl"
    fallback.symlink_to(elsewhere)  # planted where the answers would go
    with pytest.raises(StoreError, match="could not be saved to a rescue file either"):
        recorder(Refusing(), 1, [beside, fallback])(Answer(2, "B", True))
    assert not elsewhere.exists()
    fallback.unlink()
    with pytest.raises(StoreError, match=rf"trial 2 was saved to {fallback}"):
        recorder(Refusing(), 1, [beside, fallback])(Answer(2, "B", True))


def test_the_sessions_with_rescue_files_are_found_in_both_places_by_one_listing(tmp_path, monkeypatch):
    """The listing of a clinic's sessions looks for each session's rescue files only where a listing
    of the two folders found one: the same sessions as looking for each session's files."""
    monkeypatch.setattr(rescue.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    db = tmp_path / "s.db"
    assert sessions_with_rescue_files(db) == set()  # the fallback folder is not there: nothing
    beside, _ = rescue_paths(db, 3)
    beside.write_text("{}\n")
    _, fallback = rescue_paths(db, 12)
    fallback.parent.mkdir(mode=0o700, parents=True)
    fallback.write_text("{}\n")
    # not this database's: another database's files beside it and in the fallback folder, a recovered file
    (tmp_path / "t.db.session-5.unsaved.jsonl").write_text("{}\n")
    rescue_paths(tmp_path / "other" / "s.db", 7)[1].write_text("{}\n")
    (tmp_path / "s.db.session-4.recovered.jsonl").write_text("{}\n")
    found = sessions_with_rescue_files(db)
    assert found == {3, 12}
    assert found == {sid for sid in range(1, 20) if any(path.exists() for path in rescue_paths(db, sid))}
