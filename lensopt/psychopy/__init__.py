"""lensopt in PsychoPy's own idioms: a trial handler over any lensopt optimizer.

* :mod:`~lensopt.psychopy.handler` — :class:`RefractionHandler`: ``for trial in handler:`` gives the
  next trial as a dict, ``handler.addResponse(answer)`` tells the optimizer, and with an
  ``ExperimentHandler`` lensopt's columns go into the experiment's wide CSV;
* :mod:`~lensopt.psychopy.columns` — a query and its answer as flat columns (one number or word a
  cell, 1-based lens numbers, units in names).

A front end, beside :mod:`lensopt.experiment`: the numerical core never imports it (``lensopt bench
decision-time --handler`` drives it, as a user's script does). The handler
needs no window and does not import PsychoPy itself; it speaks to an ``ExperimentHandler`` by its
methods (``addData``, ``loopEnded``), so it runs without a display.
"""

from lensopt.psychopy.handler import RefractionHandler

__all__ = ["RefractionHandler"]
