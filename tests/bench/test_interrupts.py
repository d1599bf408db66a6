"""A campaign's Ctrl-C, noted as well as raised (lensopt.bench.interrupts)."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lensopt.bench.interrupts import children_ignoring_interrupts, noting_interrupts, raise_if_interrupted


class _Finalized:
    """An object whose finalizer is interrupted by a Ctrl-C, as a weakref callback of Dask's was
    under load: Python prints the KeyboardInterrupt ("Exception ignored in ...") and drops it."""

    def __del__(self):
        signal.raise_signal(signal.SIGINT)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # pytest's report of the drop
def test_a_ctrl_c_dropped_inside_a_finalizer_is_raised_again_at_the_next_check():
    received: list[int] = []
    went_on = False
    with noting_interrupts(received):
        obj = _Finalized()
        del obj  # the interrupt is raised inside __del__ and dropped there
        gc.collect()
        went_on = True  # the block goes on, as the campaign ran to its end
        assert received == [signal.SIGINT]
        with pytest.raises(KeyboardInterrupt):
            raise_if_interrupted(received)
    assert went_on
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_without_a_ctrl_c_the_check_lets_the_campaign_go_on():
    received: list[int] = []
    with noting_interrupts(received):
        raise_if_interrupted(received)  # nothing noted: nothing raised
    assert received == []


def _report_sigint(queue) -> None:  # run in a spawned child
    queue.put("ignored" if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else "handled")


def _spawned_child_sigint() -> str:
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_report_sigint, args=(queue,))
    child.start()
    try:
        return queue.get(timeout=60)
    finally:
        child.join(timeout=60)


@pytest.mark.skipif(os.name != "posix", reason="a terminal's Ctrl-C reaches a process group on POSIX")
def test_processes_spawned_within_start_with_ctrl_c_ignored_and_this_one_keeps_its_own():
    """A worker spawned meanwhile ignores Ctrl-C from its first instruction (its imports included,
    where one died of it with a traceback); one spawned after, and this process, take it as before."""
    import multiprocessing.spawn

    executable = multiprocessing.spawn.get_executable()
    with children_ignoring_interrupts():
        within = _spawned_child_sigint()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert (within, _spawned_child_sigint()) == ("ignored", "handled")
    assert multiprocessing.spawn.get_executable() == executable  # restored


def _children(pid: int) -> list[int]:
    """Every child of ``pid``, of any of its threads (Dask's nannies spawn from its event-loop thread)."""
    kids = []
    for path in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            kids += [int(c) for c in path.read_text().split()]
    return kids


def _is_worker(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return "spawn_main" in Path(f"/proc/{pid}/cmdline").read_text()
    return False


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc to see the cluster's processes start")
@pytest.mark.parametrize("delay_s", [0.05, 0.4])
def test_a_ctrl_c_to_the_terminals_group_while_the_cluster_starts_is_one_line_and_leaves_no_worker(tmp_path, delay_s):
    """Ctrl-C at the terminal (SIGINT to the campaign's whole process group) while its workers are
    still starting: before, each worker printed the traceback of its imports and Dask's close at exit
    one of an assertion (60-100 lines). Now: the campaign's one line, exit 130, no worker left."""
    pytest.importorskip("distributed")
    argv = [sys.executable, "-m", "lensopt", "bench", "robustness", "--conditions", "slope-5", "--patients", "4"]
    argv += ["--trials", "40", "--rules", "acuity-law", "--workers", "2", "--no-progress", "--out", str(tmp_path / "c")]
    campaign = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline, workers = time.monotonic() + 60, []
    while not workers and time.monotonic() < deadline:  # the workers seen are those kept: looked up once
        workers = [pid for pid in _children(campaign.pid) if _is_worker(pid)]
        time.sleep(0.005)
    assert workers, "the campaign started no worker"
    time.sleep(delay_s)  # a worker is importing: Python, numpy, Dask
    os.killpg(campaign.pid, signal.SIGINT)
    _, err = campaign.communicate(timeout=180)
    assert campaign.returncode == 130, err[-2000:]
    assert "Traceback" not in err and "Error" not in err, err[-3000:]
    assert "lensopt bench robustness: interrupted" in err
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]  # none left running
