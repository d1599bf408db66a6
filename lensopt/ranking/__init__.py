"""Top-k ranking Bayesian optimization (Nguyen et al. 2021): rankings and ties of compared sets.

- :mod:`~lensopt.ranking.likelihood`: Plackett–Luce top-k rankings and top-1 choices with ties
  under Gumbel noise (paper eqs. 1–4), closed forms with gradients;
- :mod:`~lensopt.ranking.data`: :class:`RankingObservation` and outcome validation;
- :mod:`~lensopt.ranking.variational` and :mod:`~lensopt.ranking.model`: :class:`RankingGP`, the
  variational Gaussian posterior maximizing the ELBO (eq. 5) and its predictive (eq. 6);
- :mod:`~lensopt.ranking.acquisition`: MPES (eqs. 7, 8 and the paper's steps 1–5) and the
  information of a context; :mod:`~lensopt.ranking.search`: how a query is chosen;
- :mod:`~lensopt.ranking.optimizer`: :class:`RankingOptimizer`, ask/tell with JSON state.

numpy/scipy only, like the rest of the numerical core.
"""

from lensopt.ranking.acquisition import MPES, context_information, sample_maximizers
from lensopt.ranking.data import RankingObservation, parse_outcome
from lensopt.ranking.likelihood import TIE, all_outcomes, log_likelihood, outcome_probabilities
from lensopt.ranking.model import RankingGP
from lensopt.ranking.optimizer import STATE_FORMAT, RankingOptimizer, RankingQuery
from lensopt.ranking.settings import RANKING_RULES, RankingSettings

__all__ = [
    "MPES",
    "RANKING_RULES",
    "STATE_FORMAT",
    "TIE",
    "RankingGP",
    "RankingObservation",
    "RankingOptimizer",
    "RankingQuery",
    "RankingSettings",
    "all_outcomes",
    "context_information",
    "log_likelihood",
    "outcome_probabilities",
    "parse_outcome",
    "sample_maximizers",
]
