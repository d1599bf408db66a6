"""The bracketing rule of the letter searches: test the lenses around the current optimum.

UCB keeps testing at the top of the acuity bowl, where an answer says little about *where* the
bottom is. The slope of acuity against the lens's blur ``b`` is steepest ~0.5–1 D from the bottom
(``d log10(1 + b²)/db`` peaks at ``b = 1``), which is where the ideal observer tests too, and what
a clinician's cross-cylinder and plus push do. So the bracketing rule (``bracket-ald``) scores a
few lenses at fixed distances on both sides of the current optimum, at every letter size of one
grid, by BALD (the expected information of the answer), and asks the best pair. The optimum moves
with the answers, so the bracket follows it.

:func:`most_informative` is the shared step: the most informative of a finite set of lenses and
its letter size, from one prediction over a grid of letter sizes, refined by the vertex of a
parabola (as BALD's s-step, :func:`lensopt.optimize.maximize_on_line`).
"""

from __future__ import annotations

import numpy as np

from lensopt.gp import uncertainty

#: Letter sizes at which the bracketing lenses are compared (the chosen one's is then refined).
BRACKET_LETTER_GRID = 64

#: Name of the bracketing rule in the letter optimizers.
BRACKET_RULE = "bracket-ald"


def most_informative(
    model, lenses: np.ndarray, letter_bounds_logmar, n_grid: int = BRACKET_LETTER_GRID, affine: bool = False
):
    """The most informative trial among ``lenses`` ``(n, d)`` (model coordinates) at any letter size
    in ``letter_bounds_logmar``: ``(index, letter_logmar, bits)``, with ``bits`` its BALD (the
    mutual information of the answer and the latent, bits).

    Every lens is scored at ``n_grid`` letter sizes in one prediction; the best letter size is
    then refined by the vertex of the parabola through it and its two neighbours, kept if better.

    ``affine``: the model's latent is affine in the letter size at every lens (``f(s, x) = w s +
    g(x)``: the psychophysics and acuity-bowl kernels, with a prior mean of the lens alone). Then
    the latent's mean and variance at any letter size follow exactly from its joint posterior at the
    two ends of the letter range — ``f(s) = (1 − b) f(lo) + b f(hi)``, ``b = (s − lo)/(hi − lo)`` —
    so one prediction of ``2 n`` points replaces the ``n · n_grid`` of the grid (the same numbers
    up to round-off).
    """
    lenses = np.atleast_2d(np.asarray(lenses, dtype=float))
    low_logmar, high_logmar = letter_bounds_logmar
    letters = np.linspace(low_logmar, high_logmar, n_grid)
    if affine:
        ends = _AffineLetters(model, lenses, letter_bounds_logmar)
        bits = ends.bald(letters)
    else:
        grid = np.column_stack([np.tile(letters, len(lenses)), np.repeat(lenses, len(letters), axis=0)])
        bits = model.bald(grid).reshape(len(lenses), len(letters))
    chosen, i = np.unravel_index(int(np.argmax(bits)), bits.shape)
    letter_logmar, best_bits = float(letters[i]), float(bits[chosen, i])
    if 0 < i < len(letters) - 1:
        v0, v1, v2 = bits[chosen, i - 1 : i + 2]
        curvature = v0 - 2.0 * v1 + v2
        if curvature < 0:
            vertex = letters[i] + 0.5 * (letters[1] - letters[0]) * (v0 - v2) / curvature
            if affine:
                vertex_bits = float(ends.bald(np.array([vertex]), lens=int(chosen))[0, 0])
            else:
                vertex_bits = float(model.bald(np.array([[vertex, *lenses[chosen]]]))[0])
            if vertex_bits > v1:
                letter_logmar, best_bits = float(vertex), vertex_bits
    return int(chosen), letter_logmar, best_bits


class _AffineLetters:
    """The latent's joint posterior at the two ends of the letter range, lens by lens, and from it
    its mean and variance at any letter size (see :func:`most_informative`'s ``affine``)."""

    def __init__(self, model, lenses: np.ndarray, letter_bounds_logmar):
        self.model = model
        self.lo, self.hi = (float(v) for v in letter_bounds_logmar)
        n = len(lenses)
        X = np.vstack([np.column_stack([np.full(n, self.lo), lenses]), np.column_stack([np.full(n, self.hi), lenses])])
        mean, cov = model.predict_latent(X, full_cov=True)
        index = np.arange(n)
        self.mean_lo, self.mean_hi = mean[:n], mean[n:]
        self.var_lo, self.var_hi = cov[index, index], cov[n + index, n + index]
        self.cov_lo_hi = cov[index, n + index]

    def moments(self, letters: np.ndarray, lens: int | None = None):
        """Latent mean and variance ``(n_lenses, n_letters)`` (of the one lens ``lens``: one row)."""
        rows = slice(None) if lens is None else slice(lens, lens + 1)
        b = ((np.asarray(letters, dtype=float) - self.lo) / (self.hi - self.lo))[None, :]
        a = 1.0 - b
        mean = a * self.mean_lo[rows, None] + b * self.mean_hi[rows, None]
        var = (
            a * a * self.var_lo[rows, None] + 2.0 * a * b * self.cov_lo_hi[rows, None] + b * b * self.var_hi[rows, None]
        )
        return mean, np.maximum(var, 0.0)

    def bald(self, letters: np.ndarray, lens: int | None = None) -> np.ndarray:
        """BALD (bits) ``(n_lenses, n_letters)``, as the model's own ``bald`` computes it."""
        mean, var = self.moments(letters, lens)
        model = self.model
        if model.floored:
            return uncertainty.floored_bald_bits(mean, var, model.guess_rate, model.lapse_rate)
        return uncertainty.bald_bits(mean, var)
