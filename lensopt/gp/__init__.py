"""Gaussian-process classification for lensopt (numpy/scipy only).

``GPClassifier`` (probit likelihood, Laplace or EP inference, Owen's-T uncertainty, BALD in bits,
type-II ML hyperparameters) and the kernels of :mod:`lensopt.gp.kernels`, re-exported here.
Names resolve lazily, so ``import lensopt.gp`` stays cheap and a submodule can import another
without cycles.
"""

_KERNEL_NAMES = (
    "Kernel",
    "LinearContext",
    "Matern32",
    "Matern52",
    "Product",
    "SquaredExponential",
    "Sum",
    "benchmark_context_kernel",
    "psychophysics_kernel",
)

__all__ = ["GPClassifier", *_KERNEL_NAMES]


def __getattr__(name):
    if name == "GPClassifier":
        from lensopt.gp.classifier import GPClassifier  # deferred: PEP 562, importing one gp module loads not all

        return GPClassifier
    if name in _KERNEL_NAMES:
        from lensopt.gp import kernels  # deferred: as above

        return getattr(kernels, name)
    raise AttributeError(f"module 'lensopt.gp' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
