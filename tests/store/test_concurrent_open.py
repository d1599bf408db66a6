"""Concurrent starts: many processes opening the same new database at the same instant."""

import multiprocessing
import sqlite3

import pytest

from lensopt.errors import StoreError
from lensopt.store import SCHEMA_VERSION, SessionStore

#: Processes released together by a barrier, and how many times the race is run.
N_PROCESSES = 8
N_REPETITIONS = 20

#: Seconds a child may wait at the barrier or a test may wait for its children.
WAIT_S = 30.0

CONTEXT = multiprocessing.get_context("fork")


def _create_and_append(path, barrier, results, participant):
    try:
        barrier.wait(WAIT_S)
        with SessionStore(path) as store:
            store.create_session(participant, {}, {}, {"rule": "random"}, 0)
        results.put((participant, "ok"))
    except BaseException as exc:  # noqa: BLE001 -- reported to the parent, which fails the test
        results.put((participant, f"{type(exc).__name__}: {exc}"))


def _open_readonly(path, barrier, results, participant):
    try:
        barrier.wait(WAIT_S)
        try:
            with SessionStore(path, readonly=True) as store:
                store.sessions()
            results.put((participant, "ok"))
        except StoreError as exc:
            # Before the creator has made the file or its layout, a reader is told so in one line.
            clean = "no session database" in str(exc) or "holds no lensopt sessions yet" in str(exc)
            results.put((participant, "ok" if clean else f"{type(exc).__name__}: {exc}"))
    except BaseException as exc:  # noqa: BLE001 -- reported to the parent
        results.put((participant, f"{type(exc).__name__}: {exc}"))


def _race(path, targets):
    barrier = CONTEXT.Barrier(len(targets))
    results = CONTEXT.Queue()
    processes = [
        CONTEXT.Process(target=target, args=(path, barrier, results, f"P{i:02d}")) for i, target in enumerate(targets)
    ]
    for process in processes:
        process.start()
    outcomes = dict(results.get(timeout=WAIT_S) for _ in processes)
    for process in processes:
        process.join(WAIT_S)
    return outcomes


def _check_database(path, participants):
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        stored = sorted(row[0] for row in conn.execute("SELECT participant FROM sessions"))
    finally:
        conn.close()
    assert stored == sorted(participants)


@pytest.mark.parametrize("repetition", range(N_REPETITIONS))
def test_simultaneous_starts_on_a_new_database_all_succeed_and_record_their_session(tmp_path, repetition):
    path = tmp_path / "sessions.db"
    outcomes = _race(path, [_create_and_append] * N_PROCESSES)
    failures = {name: outcome for name, outcome in outcomes.items() if outcome != "ok"}
    assert not failures
    assert len(outcomes) == N_PROCESSES
    _check_database(path, outcomes)


@pytest.mark.parametrize("repetition", range(5))
def test_readers_opening_while_the_database_is_created_see_it_whole_or_are_told_it_is_empty(tmp_path, repetition):
    path = tmp_path / "sessions.db"
    targets = [_create_and_append] * 4 + [_open_readonly] * 4
    outcomes = _race(path, targets)
    failures = {name: outcome for name, outcome in outcomes.items() if outcome != "ok"}
    assert not failures
    _check_database(path, [f"P{i:02d}" for i in range(4)])
