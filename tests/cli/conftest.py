"""Fixtures of the CLI's tests."""

import pytest


@pytest.fixture
def no_fit(monkeypatch):
    """Make any hyperparameter fit fail the test: a bad --output must be refused before fitting."""
    import lensopt.cli.handlers.hyperparameters as fits  # the handler's own names for the fits

    def forbidden(*args, **kwargs):
        raise AssertionError("the fit ran before --output was checked")

    monkeypatch.setattr(fits, "fit_reference_hyperparameters", forbidden)
    monkeypatch.setattr(fits, "fit_prescription_hyperparameters", forbidden)
