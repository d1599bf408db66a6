"""A campaign's Ctrl-C, noted as well as raised (lensopt.bench.interrupts)."""

from __future__ import annotations

import gc
import signal

import pytest

from lensopt.bench.interrupts import noting_interrupts, raise_if_interrupted


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
