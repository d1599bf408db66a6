"""The names a scientist reaches from ``lensopt`` and ``lensopt.refraction``: loaded on first use, listed
by ``dir()`` (tab completion), and only the package's own."""

import subprocess
import sys

import pytest

import lensopt
import lensopt.refraction as refraction


def test_the_top_level_gives_the_optimizers_the_stopping_rule_and_the_lens_and_lists_them():
    from lensopt.refraction.acuity_law import AcuityLawOptimizer
    from lensopt.refraction.lens import Lens
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.refraction.prescription_letters import PrescriptionOptimizer
    from lensopt.stopping import StopRule

    assert lensopt.AcuityLawOptimizer is AcuityLawOptimizer and lensopt.RefractionOptimizer is RefractionOptimizer
    assert lensopt.PrescriptionOptimizer is PrescriptionOptimizer and lensopt.StopRule is StopRule
    assert lensopt.Lens is Lens
    for name in lensopt.__all__:
        assert name in dir(lensopt) and getattr(lensopt, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'np'"):
        _ = lensopt.np


def test_dir_lists_the_lazy_names_before_they_are_loaded():
    code = "import lensopt, lensopt.refraction as r, sys; print('RefractionOptimizer' in dir(lensopt), 'AcuityLawOptimizer' in dir(r), 'scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True", "False"]  # listed, and listing them loaded nothing heavy


def test_the_refraction_package_gives_its_letter_constants_but_not_what_letters_imports():
    from lensopt.refraction import letters

    assert refraction.PAPER_LETTER_MODEL == letters.PAPER_LETTER_MODEL  # as when it was one module
    assert refraction.REFRACTION_BETA == letters.REFRACTION_BETA
    for imported in ("np", "StopRule", "ContextualOptimizer", "_private"):
        assert hasattr(letters, imported) or imported == "_private"
        with pytest.raises(AttributeError, match=rf"'lensopt.refraction' has no attribute '{imported}'"):
            getattr(refraction, imported)
