"""The shipped reference data (lensopt.reference_data): a missing file is named with where to read
how to regenerate it, a README that an installed lensopt has too."""

import re
from pathlib import Path

import pytest

from lensopt.reference_data import load_json


def test_a_missing_reference_file_points_at_the_shipped_readme_by_its_real_path():
    with pytest.raises(FileNotFoundError) as raised:
        load_json("no-such-reference-data.json")
    readme = re.search(r"\(see (\S+)\)", str(raised.value))
    assert readme, str(raised.value)
    assert Path(readme.group(1)).is_absolute() and Path(readme.group(1)).is_file(), str(raised.value)
