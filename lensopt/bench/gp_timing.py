"""Timing of the GP classifier on the ask/tell hot path: ``python -m lensopt.bench.gp_timing``.

For ``n`` = 50, 100, 260 and 500 refraction-like trials (``letter_logmar ∈ [−1, 2]``,
``sphere_d, cylinder_d ∈ [−4, 4]``, answers from a simulated observer) and the psychophysics
kernel, it prints the median time of

- a cold fit plus the latent prediction (mean and variance) on 2,500 points;
- a warm-started single-trial update (``fit`` on the previous data plus one appended row).

OpenBLAS's threads fight each other on a small, busy machine (small Cholesky factorizations
become tens of times slower), so by default the benchmark runs BLAS single-threaded; pass
``--blas-threads 0`` to keep the library default. numpy is imported only after that choice.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

DEFAULT_SIZES = (50, 100, 260, 500)
"""Training-set sizes timed by default (260 = the paper's trial budget)."""

N_PREDICTION_POINTS = 2500
"""Number of candidate points predicted after each fit."""

DEFAULT_REPEATS = 7
"""Repeats per measurement; the median is reported."""

_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _parse(argv):
    parser = argparse.ArgumentParser(prog="python -m lensopt.bench.gp_timing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES), help="training-set sizes")
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="repeats per measurement (median)")
    parser.add_argument("--inference", choices=("laplace", "ep"), default="laplace")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--blas-threads", type=int, default=1, help="BLAS threads (default 1; 0 = library default)")
    args = parser.parse_args(argv)
    if args.repeats < 1 or any(n < 2 for n in args.sizes) or args.blas_threads < 0:
        parser.error("--repeats must be ≥ 1, --sizes ≥ 2 and --blas-threads ≥ 0")
    return args


def _simulated_trials(n, rng):
    """Refraction-like inputs and answers of an observer with true correction (−1.25, 0.75) D."""
    import numpy as np
    from scipy.special import ndtr

    X = np.column_stack([rng.uniform(-1.0, 2.0, n), rng.uniform(-4.0, 4.0, (n, 2))])
    residual_sphere_d, residual_cylinder_d = X[:, 1] + 1.25, X[:, 2] - 0.75
    blur_d2 = 0.5 * (residual_sphere_d**2 + (residual_sphere_d + residual_cylinder_d) ** 2)
    acuity_logmar = -0.1 + np.log10(1.0 + blur_d2)
    p_correct = 1.0 / 26.0 + (25.0 / 26.0) * ndtr(5.0 * (X[:, 0] - acuity_logmar))
    return X, (rng.uniform(size=n) < p_correct).astype(float)


def _median_seconds(fn, repeats):
    import numpy as np

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv=None) -> int:
    args = _parse(argv)
    if args.blas_threads:
        if "numpy" in sys.modules:
            print("note: numpy already imported; --blas-threads has no effect", file=sys.stderr)
        for name in _BLAS_ENV:
            os.environ[name] = str(args.blas_threads)
    # deferred: numpy (which lensopt.gp imports) must load after --blas-threads sets the BLAS variables
    import numpy as np

    from lensopt.gp import GPClassifier, psychophysics_kernel

    rng = np.random.default_rng(args.seed)
    kernel = psychophysics_kernel(theta=4.0, lengthscales=[1.5, 1.5], variance=2.0)
    X_candidates = _simulated_trials(N_PREDICTION_POINTS, rng)[0]
    print(
        f"GP classifier timing ({args.inference}, psychophysics kernel, {N_PREDICTION_POINTS} prediction points, "
        f"median of {args.repeats}, BLAS threads: {args.blas_threads or 'default'})"
    )
    print(
        f"{'n':>6} {'fit+predict ms':>15} {'fit ms':>9} {'predict ms':>11} {'warm update ms':>15} {'iters cold/warm':>16}"
    )
    for n in args.sizes:
        X, y = _simulated_trials(n, rng)

        def fit_and_predict():
            GPClassifier(kernel, inference=args.inference).fit(X, y).predict_latent(X_candidates)  # noqa: B023 - called within this iteration

        fit_and_predict()  # warm caches and imports
        total = _median_seconds(fit_and_predict, args.repeats)
        fit_only = _median_seconds(lambda: GPClassifier(kernel, inference=args.inference).fit(X, y), args.repeats)  # noqa: B023 - called within this iteration
        gp = GPClassifier(kernel, inference=args.inference).fit(X, y)
        cold_iterations = gp.n_iterations_
        predict = _median_seconds(lambda: gp.predict_latent(X_candidates), args.repeats)  # noqa: B023 - called within this iteration

        warm_times, warm_iterations = [], []
        for _ in range(args.repeats):
            gp = GPClassifier(kernel, inference=args.inference).fit(X[:-1], y[:-1])
            start = time.perf_counter()
            gp.fit(X, y)
            warm_times.append(time.perf_counter() - start)
            warm_iterations.append(gp.n_iterations_)
        print(
            f"{n:>6} {1e3 * total:>15.1f} {1e3 * fit_only:>9.1f} {1e3 * predict:>11.1f} "
            f"{1e3 * float(np.median(warm_times)):>15.1f} {cold_iterations:>8}/{int(np.median(warm_iterations))}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
