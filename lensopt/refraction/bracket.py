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

#: Letter sizes at which the bracketing lenses are compared (the chosen one's is then refined).
BRACKET_LETTER_GRID = 64

#: Name of the bracketing rule in the letter optimizers.
BRACKET_RULE = "bracket-ald"


def most_informative(model, lenses: np.ndarray, letter_bounds_logmar, n_grid: int = BRACKET_LETTER_GRID):
    """The most informative trial among ``lenses`` ``(n, d)`` (model coordinates) at any letter size
    in ``letter_bounds_logmar``: ``(index, letter_logmar, bits)``, with ``bits`` its BALD (the
    mutual information of the answer and the latent, bits).

    Every lens is scored at ``n_grid`` letter sizes in one prediction; the best letter size is
    then refined by the vertex of the parabola through it and its two neighbours, kept if better.
    """
    lenses = np.atleast_2d(np.asarray(lenses, dtype=float))
    letters = np.linspace(*letter_bounds_logmar, n_grid)
    grid = np.column_stack([np.tile(letters, len(lenses)), np.repeat(lenses, len(letters), axis=0)])
    bits = model.bald(grid).reshape(len(lenses), len(letters))
    chosen, i = np.unravel_index(int(np.argmax(bits)), bits.shape)
    letter_logmar, best_bits = float(letters[i]), float(bits[chosen, i])
    if 0 < i < len(letters) - 1:
        v0, v1, v2 = bits[chosen, i - 1 : i + 2]
        curvature = v0 - 2.0 * v1 + v2
        if curvature < 0:
            vertex = letters[i] + 0.5 * (letters[1] - letters[0]) * (v0 - v2) / curvature
            vertex_bits = float(model.bald(np.array([[vertex, *lenses[chosen]]]))[0])
            if vertex_bits > v1:
                letter_logmar, best_bits = float(vertex), vertex_bits
    return int(chosen), letter_logmar, best_bits
