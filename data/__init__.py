"""Reference data of lensopt (JSON), installed as the package ``lensopt.data``.

pyproject.toml maps this folder onto ``lensopt.data`` so that a wheel carries the files and
``importlib.resources.files("lensopt.data")`` finds them in a regular and an editable install alike
(this file makes the folder a package, which editable installs need). Read them through
:mod:`lensopt.reference_data`; see README.md here for what each file is.
"""
