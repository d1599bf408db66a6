"""Stimuli of lensopt (the letter geometry), installed as the package ``lensopt.stimuli``.

pyproject.toml maps this folder onto ``lensopt.stimuli`` so that a wheel carries the files and
``importlib.resources.files("lensopt.stimuli")`` finds them in a regular and an editable install
alike (this file makes the folder a package, which editable installs need). Read through
:mod:`lensopt.reference_data` (``STIMULI_DIR``) and :func:`lensopt.experiment.optotypes.load_glyphs`.
"""
