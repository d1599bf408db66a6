"""Helpers shared by the experiment tests (protocol files, display check)."""

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO_PROTOCOL = REPO / "protocols" / "demo-simulated.toml"

needs_display = pytest.mark.skipif(
    not os.environ.get("DISPLAY"),
    reason="needs an X display for a PsychoPy window: run under xvfb-run -a -s '-screen 0 1920x1080x24'",
)


def write_protocol(path: Path, source: Path = DEMO_PROTOCOL, **fields) -> Path:
    """Copy ``source`` to ``path`` with ``fields`` (``"section.key": toml_value_text``) replaced."""
    text = source.read_text()
    for dotted, value in fields.items():
        section, key = dotted.split(".")
        block = re.search(rf"^\[{section}\]\n(.*?)(?=^\[|\Z)", text, flags=re.S | re.M)
        assert block, f"no [{section}] in {source}"
        body = block.group(1)
        if value is None:
            new_body = re.sub(rf"^{key} = .*\n", "", body, flags=re.M)
        elif re.search(rf"^{key} = ", body, flags=re.M):
            new_body = re.sub(rf"^{key} = .*$", f"{key} = {value}", body, flags=re.M)
        else:
            new_body = f"{key} = {value}\n" + body
        text = text[: block.start(1)] + new_body + text[block.end(1) :]
    path.write_text(text)
    return path


FAST = {
    "timing.fixation_s": "0.0",
    "timing.feedback_s": "0.0",
    "timing.iti_s": "0.0",
    "timing.simulated_response_s": "0.0",
    "display.window_size_px": "[400, 300]",
    "breaks.every_trials": "0",
}
"""Protocol fields that make a window session fast (no waits, a small window)."""
