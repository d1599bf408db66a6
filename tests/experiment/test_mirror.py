"""Mirror mode (``[display] mirror = true``): the patient's window is flipped left–right, the
clinician's console is not. Checked on frames saved by ``--save-frames`` under Xvfb."""

import numpy as np
import pytest
from PIL import Image

from experiment_helpers import FAST, needs_display, write_protocol
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.session import RunRequest, run_session

pytestmark = needs_display

N_TRIALS = 4


def _frames(tmp_path, mirror: bool) -> list[np.ndarray]:
    name = "mirror" if mirror else "plain"
    protocol = write_protocol(tmp_path / f"{name}.toml", **FAST, **{"display.mirror": str(mirror).lower()})
    frames = tmp_path / f"frames-{name}"
    outcome = run_session(
        RunRequest(
            db_path=tmp_path / f"{name}.db",
            protocol_path=protocol,
            participant="sim",
            observer="simulated",
            seed=11,
            trials=N_TRIALS,
            frames_dir=frames,
        ),
        log=lambda m: None,
    )
    assert outcome.n_trials == N_TRIALS
    return [np.asarray(Image.open(frames / f"trial-{k:03d}.png").convert("L")) for k in range(1, N_TRIALS + 1)]


def test_a_mirrored_frame_is_the_plain_frame_flipped_left_right(tmp_path):
    plain, mirrored = _frames(tmp_path, False), _frames(tmp_path, True)
    # a symmetric letter (A, H, O...) proves nothing: at least one frame must change when flipped
    asymmetric = [k for k, (a, b) in enumerate(zip(plain, mirrored, strict=True), 1) if ((a < 128) != (b < 128)).any()]
    assert asymmetric, "every letter drawn is symmetric: choose another seed"
    for k, (a, b) in enumerate(zip(plain, mirrored, strict=True), start=1):
        assert a.shape == b.shape
        dark = a < 128
        assert dark.any(), f"trial {k}: no letter drawn"
        # equal to the flip, allowing one pixel of shift for rasterization at the flipped edges
        flipped = np.fliplr(dark)
        mismatch = flipped != (b < 128)
        near = np.zeros_like(mismatch)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                near |= np.roll(np.roll(b < 128, dy, axis=0), dx, axis=1) == flipped
        assert not (mismatch & ~near).any(), f"trial {k}: differs from the flipped frame by more than a pixel"
        assert mismatch.sum() <= 0.05 * dark.sum(), f"trial {k}: {mismatch.sum()} of {dark.sum()} dark pixels differ"


def test_the_clinicians_console_is_never_mirrored(tmp_path):
    from lensopt.experiment.console import open_console_window
    from lensopt.experiment.loop_screens import is_mirrored

    protocol = load_protocol(write_protocol(tmp_path / "m.toml", **FAST, **{"display.mirror": "true"}))
    assert protocol.display.mirror
    win = open_console_window(protocol)
    try:
        assert not is_mirrored(win)
    finally:
        win.close()


@pytest.mark.parametrize("value", ['"yes"', "1"])
def test_mirror_must_be_true_or_false(tmp_path, value):
    from lensopt.errors import LensoptError

    with pytest.raises((ValueError, LensoptError), match="mirror"):
        load_protocol(write_protocol(tmp_path / "bad.toml", **FAST, **{"display.mirror": value}))
