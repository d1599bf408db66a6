"""The feedback modes of a refraction: letters, duels and rankings, one module each.

A mode (:class:`lensopt.modes.base.FeedbackMode`) declares the domain parts of one kind of
session: the stored session kind, its optimizer and the options only that optimizer takes, its
query and answer types and valid answers, how the simulated patient answers, how stored records
become the optimizer's history, and which family of dashboard panels draws it.
:mod:`lensopt.modes.registry` maps each kind to its mode (``registry``, ``get_mode(kind)``); the
simulation, the ``simulate`` command, the benchmarks, the PsychoPy experiment and the dashboard
dispatch from it. This package file imports nothing, so that importing the light
:mod:`lensopt.modes.base` does not import the optimizers.
"""
