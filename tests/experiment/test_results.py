"""A finished two-parameter letter search stores its best lens as the session's result
(:func:`lensopt.experiment.results.letter_result`): on the phoropter's steps, in minus cylinder at the
protocol's axis (a positive signed cylinder transposed, its intervals with it), or as sphere and
signed cylinder without an axis."""

import types

import numpy as np
import pytest

from experiment_helpers import REPO
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.results import letter_result
from lensopt.refraction.certainty import LensCertainty
from lensopt.refraction.lens import Lens

REFRACTION = REPO / "protocols" / "clinical-refraction.toml"


def search(best, sphere_interval, cylinder_interval, meridian_interval, confidence=0.97, acuity=-0.04):
    """A stand-in letter search with a known best lens, certainty and predicted acuity."""
    certainty = LensCertainty(
        confidence,
        sphere_interval,
        cylinder_interval,
        meridian_interval_d=meridian_interval,
        equivalent_interval_d=(-0.3, 0.2),
    )
    return types.SimpleNamespace(
        best=lambda: best,
        certainty=lambda: certainty,
        predicted_acuity_logmar=lambda s, c: (np.asarray(acuity), np.asarray(0.01)),
        n_trials=42,
        settings_dict=lambda: {"letter_bounds_logmar": [-0.3, 1.0]},
    )


def test_a_positive_signed_cylinder_at_the_axis_is_stored_transposed_with_its_intervals():
    protocol = load_protocol(REFRACTION).with_lens_axis(90.0)
    # best (-0.47, +1.04) on 0.25 D steps: (-0.50, +1.00) along 90° = +0.50 / -1.00 x 180 (by hand)
    found = search((-0.47, 1.04), (-1.0, 0.0), (0.5, 1.5), (0.25, 0.75))
    result = letter_result(found, protocol, "OD")
    assert result.prescription == "+0.50 / -1.00 x 180"
    assert (result.sphere_d, result.cylinder_d, result.axis_deg) == (0.5, -1.0, 180.0)
    # S + C; −C reversed; M as given; J0 = −(C/2) cos 180° = C/2 and J45 = −(C/2) sin 180° = 0 (by hand)
    assert result.intervals == {
        "sphere_d": [0.25, 0.75],
        "cylinder_d": [-1.5, -0.5],
        "m_d": [-0.3, 0.2],
        "j0_d": pytest.approx([0.25, 0.75]),
        "j45_d": pytest.approx([0.0, 0.0], abs=1e-15),
    }
    assert (result.confidence, result.predicted_acuity_logmar, result.n_trials, result.eye) == (0.97, -0.04, 42, "OD")
    assert Lens.parse(result.prescription).is_equivalent(Lens(-0.5, 1.0, 90.0))  # the same optical lens


def test_a_minus_signed_cylinder_keeps_its_own_intervals_and_no_axis_means_none():
    found = search((-1.26, -0.74), (-1.5, -1.0), (-1.0, -0.5), (-2.5, -1.5))
    at_170 = letter_result(found, load_protocol(REFRACTION).with_lens_axis(170.0))
    assert at_170.prescription == "-1.25 / -0.75 x 170" and at_170.axis_deg == 170.0
    cos_340, sin_340 = 0.9396926207859084, -0.3420201433256687  # 2 × 170°
    assert at_170.intervals == {
        "sphere_d": [-1.5, -1.0],
        "cylinder_d": [-1.0, -0.5],
        "m_d": [-0.3, 0.2],
        "j0_d": pytest.approx([0.25 * cos_340, 0.5 * cos_340]),  # −(C/2) cos 2α at C = −0.5 and −1
        "j45_d": pytest.approx([0.5 * sin_340, 0.25 * sin_340]),
    }
    unaxed = letter_result(search((-0.47, 1.04), (-1.0, 0.0), (0.5, 1.5), None), load_protocol(REFRACTION))
    assert unaxed.prescription == "S -0.50 D  C +1.00 D" and unaxed.axis_deg is None
    assert (unaxed.sphere_d, unaxed.cylinder_d) == (-0.5, 1.0)
    assert unaxed.intervals == {"sphere_d": [-1.0, 0.0], "cylinder_d": [0.5, 1.5], "m_d": [-0.3, 0.2]}


def test_a_transposed_lens_needs_the_interval_of_its_other_meridian():
    found = search((-0.5, 1.0), (-1.0, 0.0), (0.5, 1.5), None)
    with pytest.raises(ValueError, match="S \\+ C"):
        letter_result(found, load_protocol(REFRACTION).with_lens_axis(90.0))


@pytest.mark.parametrize(
    "acuity, stored",
    [(-0.04, -0.04), (-0.39, -0.39), (1.09, 1.09), (-5.22, None), (-0.41, None), (1.2, None), (np.nan, None)],
)
def test_a_predicted_acuity_far_beyond_the_letters_shown_is_not_stored(acuity, stored):
    """After a few answers the model's threshold is an extrapolation (-5.22 logMAR after 3 letters):
    beyond one chart line (0.1 logMAR) outside the letters the session shows (-0.30 to +1.00 here)
    the result stores no predicted acuity, rather than an impossible one."""
    protocol = load_protocol(REFRACTION).with_lens_axis(90.0)
    result = letter_result(search((-0.47, 1.04), (-1.0, 0.0), (0.5, 1.5), (0.25, 0.75), acuity=acuity), protocol)
    assert result.predicted_acuity_logmar == (None if stored is None else pytest.approx(stored))


def test_a_protocol_with_continuous_lens_powers_stores_the_best_lens_as_found():
    """``[lens] step_d = 0`` (research-26afc: continuous powers): the stored result is the model's
    best lens itself, not rounded to a phoropter's 0.25 D steps (the JSON export is lossless)."""
    protocol = load_protocol(REPO / "protocols" / "research-26afc.toml")
    assert protocol.lens_step_d is None
    result = letter_result(search((-1.4371, -0.6652), (-2.0, -1.0), (-1.2, -0.2), (-2.5, -1.5)), protocol)
    assert (result.sphere_d, result.cylinder_d) == (-1.4371, -0.6652)
    assert result.prescription == "S -1.44 D  C -0.67 D"
