"""The shipped experiment protocols (TOML), installed as the package ``lensopt.protocols``.

pyproject.toml maps this folder onto ``lensopt.protocols`` so that a wheel carries the files and
``importlib.resources.files("lensopt.protocols")`` finds them in a regular and an editable install
alike (this file makes the folder a package, which editable installs need). ``lensopt run
--protocol NAME`` takes a shipped protocol by name (``demo-simulated``) from any folder.
"""
