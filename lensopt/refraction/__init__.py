"""The refraction domain: lenses, trials, phoropter rounding and the three refraction optimizers.

Everything here speaks lenses (D) and letter sizes (logMAR) over the model families
(:mod:`lensopt.binary`, :mod:`lensopt.preference`, :mod:`lensopt.ranking`):

- :mod:`~lensopt.refraction.lens`: the :class:`Lens` type, power vectors and lens text (imports
  nothing else of lensopt; the simulated patient's optics use its power-vector math);
- :mod:`~lensopt.refraction.trial`: the letter :class:`Trial` and the duel answers;
- :mod:`~lensopt.refraction.phoropter`: rounding to the phoropter's step, distinct lenses;
- :mod:`~lensopt.refraction.certainty`: the certainty of the letter optimizer's best lens;
- :mod:`~lensopt.refraction.letters`: :class:`RefractionOptimizer` (letters read right or wrong),
  its bounds, reference kernel and letter model;
- :mod:`~lensopt.refraction.acuity_law`: :class:`AcuityLawOptimizer` (letters too: grid Bayes over
  the correction and the patient's best acuity under the blur–acuity law, rule ``"acuity-law"``);
- :mod:`~lensopt.refraction.duels`: :class:`DuelRefractionOptimizer` ("one or two?");
- :mod:`~lensopt.refraction.rankings`: :class:`RankingRefractionOptimizer` (rank a set of lenses);
- :mod:`~lensopt.refraction.prescription_letters`: ``PrescriptionOptimizer``, letters of the full
  prescription (sphere, cylinder, axis) in power vectors; what it reports (the most-plus lens, the
  prescription and its confidence) is its base class in :mod:`~lensopt.refraction.prescription_report`;
- :mod:`~lensopt.refraction.prescription_duels`: :class:`PrescriptionDuelOptimizer`, duels of the
  full prescription (sphere, cylinder, axis) in power vectors, and its :class:`PrescriptionDuelTrial`;
- :mod:`~lensopt.refraction.prescription_rankings`: :class:`PrescriptionRankingOptimizer`, rankings
  of the full prescription, and its :class:`PrescriptionRankingTrial` (both comparison searches
  share :mod:`~lensopt.refraction.prescription_comparisons`).

No module here imports the simulated patient (:mod:`lensopt.observer`); the import-linter
contracts in pyproject.toml hold it.

The names below are loaded on first use (PEP 562), so that importing a light part of the domain
(``lensopt.refraction.lens``, ``.trial``, ``.phoropter``: the observer, the store) does not load the
optimizers and their numpy/scipy. ``lensopt.refraction.X`` for any other public name of the letter
optimizer's module (its bounds and constants: ``PAPER_LETTER_MODEL``, ``MERIDIAN_MAP``...) is
``lensopt.refraction.letters.X``, as it was when ``lensopt.refraction`` was one module.
"""

from __future__ import annotations

import importlib
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the real names for type checkers; at run time, __getattr__ below
    from lensopt.refraction.acuity_law import AcuityLawOptimizer
    from lensopt.refraction.certainty import LensCertainty
    from lensopt.refraction.duels import DuelRefractionOptimizer, DuelTrial
    from lensopt.refraction.lens import Lens, PowerVector, parse_lens
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer, PrescriptionDuelTrial
    from lensopt.refraction.prescription_letters import PrescriptionOptimizer
    from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer, PrescriptionRankingTrial
    from lensopt.refraction.rankings import RankingRefractionOptimizer, RankingTrial
    from lensopt.refraction.trial import DUEL_ANSWERS, Trial

#: Where each exported name lives.
_EXPORTS = {
    "AcuityLawOptimizer": "acuity_law",
    "DUEL_ANSWERS": "trial",
    "DuelRefractionOptimizer": "duels",
    "DuelTrial": "duels",
    "Lens": "lens",
    "LensCertainty": "certainty",
    "PowerVector": "lens",
    "PrescriptionDuelOptimizer": "prescription_duels",
    "PrescriptionOptimizer": "prescription_letters",
    "PrescriptionDuelTrial": "prescription_duels",
    "PrescriptionRankingOptimizer": "prescription_rankings",
    "PrescriptionRankingTrial": "prescription_rankings",
    "RankingRefractionOptimizer": "rankings",
    "RankingTrial": "rankings",
    "RefractionOptimizer": "letters",
    "Trial": "trial",
    "parse_lens": "lens",
}

__all__ = [
    "DUEL_ANSWERS",
    "AcuityLawOptimizer",
    "DuelRefractionOptimizer",
    "DuelTrial",
    "Lens",
    "LensCertainty",
    "PowerVector",
    "PrescriptionDuelOptimizer",
    "PrescriptionDuelTrial",
    "PrescriptionOptimizer",
    "PrescriptionRankingOptimizer",
    "PrescriptionRankingTrial",
    "RankingRefractionOptimizer",
    "RankingTrial",
    "RefractionOptimizer",
    "Trial",
    "parse_lens",
]


def __getattr__(name: str) -> Any:
    # deferred: the optimizers import numpy/scipy; lensopt.refraction.lens (the observer's optics)
    # and .trial (the store) must stay light (PEP 562 lazy attributes)
    missing = AttributeError(f"module 'lensopt.refraction' has no attribute {name!r}")
    if name.startswith("_"):
        raise missing
    module = importlib.import_module(f"lensopt.refraction.{_EXPORTS.get(name, 'letters')}")
    try:
        value = getattr(module, name)
    except AttributeError:
        raise missing from None
    if name not in _EXPORTS and not _defined_in(value, module):  # what letters merely imports: not this API
        raise missing
    return value


def _defined_in(value: Any, module: Any) -> bool:
    """Whether ``value`` is ``module``'s own (a constant, or a class or function it defines), not a
    module or a name it imports (``np``, ``StopRule``)."""
    if isinstance(value, types.ModuleType):
        return False
    defined = getattr(value, "__module__", None)
    return defined is None or defined == module.__name__ or not callable(value)


def __dir__() -> list[str]:  # the lazy names too, for tab completion
    return sorted({*globals(), *__all__})
