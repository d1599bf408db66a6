"""Acquisition functions on the GP classifier: one module per family."""

from lensopt.acquisition.bald import BALD
from lensopt.acquisition.ei import BinaryExpectedImprovement
from lensopt.acquisition.knowledge_gradient import ContextualKnowledgeGradient
from lensopt.acquisition.mean import PosteriorMean
from lensopt.acquisition.thompson import ThompsonSample
from lensopt.acquisition.ucb import DEFAULT_LATENT_BETA, DEFAULT_PROBIT_BETA, LatentUCB, ProbitUCB

__all__ = [
    "BALD",
    "DEFAULT_LATENT_BETA",
    "DEFAULT_PROBIT_BETA",
    "BinaryExpectedImprovement",
    "ContextualKnowledgeGradient",
    "LatentUCB",
    "PosteriorMean",
    "ProbitUCB",
    "ThompsonSample",
]
