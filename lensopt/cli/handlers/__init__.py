"""The handlers of the ``lensopt`` commands, one module per command (or part of one).

A command's parser (``lensopt.cli.<command>``) names its handler here by a
:class:`lensopt.cli.arguments.Handler` (``"lensopt.cli.handlers.<command>:<function>"``) and never
imports it (an import-linter contract): building the parser for ``lensopt --help`` imports no
optimizer, numpy, Qt or PsychoPy, and a handler module imports what it uses at its top.
"""
