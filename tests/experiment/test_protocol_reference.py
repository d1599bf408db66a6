"""docs/protocols.md, the protocol reference, against the protocol tables it documents.

Every key of every table of :data:`lensopt.experiment.protocol.SECTIONS` is in a row of the doc's
table under its ``## [table]`` heading (in the order of SECTIONS), with the dataclass's default (read
as a TOML value; ``required`` for a key without one, ``none ...`` for a default of None), and no row
names a key the table does not have; each table says whether it is required. Every shipped protocol
parses and writes only documented keys. The checker is tested on edited copies of the doc, so that
a missing key or a wrong default is seen to fail.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from pathlib import Path

import pytest

from lensopt.experiment.protocol import OPTIONAL_SECTIONS, SECTIONS, load_protocol
from lensopt.reference_data import PROTOCOLS_DIR

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocols.md"
HEADING = re.compile(r"^## \[(\w+)\]\s*$")
KEY_CELL = re.compile(r"^`(\w+)`$")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]  # not at "\|"


def parse_reference(text: str) -> dict[str, dict]:
    """``{table: {"status": first line under the heading, "order": n, "rows": {key: default cell}}}``."""
    tables: dict[str, dict] = {}
    current = None
    default_column = None
    for line in text.splitlines():
        match = HEADING.match(line)
        if match:
            current = tables.setdefault(match.group(1), {"status": "", "order": len(tables), "rows": {}})
            default_column = None
            continue
        if line.startswith("#"):  # any other heading ends the table's section
            current = None
            continue
        if current is None:
            continue
        if not current["status"] and line.strip():
            current["status"] = line.strip()
        if not line.startswith("|"):
            continue
        cells = _cells(line)
        if default_column is None and "Default" in cells:
            default_column = cells.index("Default")
            continue
        key = KEY_CELL.match(cells[0])
        if key and default_column is not None and len(cells) > default_column:
            current["rows"][key.group(1)] = cells[default_column]
    return tables


def _table_is_required(name: str, cls) -> bool:
    """As :func:`lensopt.experiment.protocol.protocol_from_dict` decides it."""
    if name in OPTIONAL_SECTIONS:
        return False
    if any(f.default is dataclasses.MISSING for f in dataclasses.fields(cls)):
        return True
    try:
        cls()
    except ValueError:
        return True
    return False


def _default_problem(where: str, cell: str, default) -> str | None:
    if default is dataclasses.MISSING:
        return None if cell == "required" else f"{where}: has no default, the doc says {cell!r} (write 'required')"
    if cell == "required":
        return f"{where}: the doc says required, the default is {default!r}"
    if default is None:
        return (
            None
            if cell.startswith("none")
            else f"{where}: the default is None, the doc says {cell!r} (write 'none ...')"
        )
    value = cell.removeprefix("`").removesuffix("`")
    try:
        written = tomllib.loads(f"x = {value}")["x"]
    except tomllib.TOMLDecodeError:
        return f"{where}: the default {cell!r} is not a TOML value (the code's is {default!r})"
    # json keeps the types apart (1 and 1.0, 1 and true) and reads tuples as lists
    if json.dumps(written) != json.dumps(default):
        return f"{where}: the doc's default {cell} is not the code's {default!r}"
    return None


def reference_problems(text: str) -> list[str]:
    """Every way ``text`` (docs/protocols.md) disagrees with SECTIONS; empty when it agrees."""
    tables = parse_reference(text)
    problems = []
    order = [name for name in tables if name in SECTIONS]
    if order != [name for name in SECTIONS if name in tables]:
        problems.append(f"tables in the order {order}, not that of SECTIONS {list(SECTIONS)}")
    problems += [f"[{name}]: a heading for a table lensopt does not have" for name in tables if name not in SECTIONS]
    for name, cls in SECTIONS.items():
        doc = tables.get(name)
        if doc is None:
            problems.append(f"[{name}]: no '## [{name}]' heading")
            continue
        word = "**Required" if _table_is_required(name, cls) else "**Optional"
        if not doc["status"].startswith(word):
            problems.append(f"[{name}]: the first line under the heading should start {word!r}, got {doc['status']!r}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for key, field in fields.items():
            if key not in doc["rows"]:
                problems.append(f"{name}.{key}: no row under '## [{name}]'")
                continue
            problem = _default_problem(f"{name}.{key}", doc["rows"][key], field.default)
            if problem:
                problems.append(problem)
        problems += [f"{name}.{key}: documented but not a key of [{name}]" for key in doc["rows"] if key not in fields]
    return problems


@pytest.fixture(scope="module")
def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def test_reference_documents_every_key_with_its_default(doc_text):
    assert reference_problems(doc_text) == []


def test_reference_names_every_table_once_per_field(doc_text):
    tables = parse_reference(doc_text)
    documented = sum(len(t["rows"]) for t in tables.values())
    assert documented == sum(len(dataclasses.fields(cls)) for cls in SECTIONS.values())


def _row_line(text: str, table: str, key: str) -> str:
    section = text.split(f"## [{table}]", 1)[1]
    return next(line for line in section.splitlines() if line.startswith(f"| `{key}` |"))


def test_checker_sees_a_missing_key(doc_text):
    edited = doc_text.replace(_row_line(doc_text, "timing", "letter_s") + "\n", "")
    assert edited != doc_text
    assert reference_problems(edited) == ["timing.letter_s: no row under '## [timing]'"]


def test_checker_sees_a_key_under_the_wrong_table(doc_text):
    row = _row_line(doc_text, "calibration", "min_stroke_px")
    moved = doc_text.replace(row + "\n", "").replace(
        _row_line(doc_text, "display", "mirror"), _row_line(doc_text, "display", "mirror") + "\n" + row
    )
    problems = reference_problems(moved)
    assert "calibration.min_stroke_px: no row under '## [calibration]'" in problems
    assert "display.min_stroke_px: documented but not a key of [display]" in problems


@pytest.mark.parametrize(
    ("table", "key", "old", "new"),
    [
        ("timing", "simulated_response_s", "`0.3`", "`0.5`"),
        ("calibration", "min_stroke_px", "`1.0`", "`1`"),  # an integer is not the code's float
        ("display", "window_size_px", "`[1280, 720]`", "`[1280, 768]`"),
        ("optimizer", "inference", '`"ep"`', '`"laplace"`'),
        ("breaks", "every_trials", "required", "`0`"),
        ("session", "eye", "none", "`0`"),
        ("lens", "prompt", "`false`", "required"),
    ],
)
def test_checker_sees_a_wrong_default(doc_text, table, key, old, new):
    row = _row_line(doc_text, table, key)
    assert f"| {old}" in row
    edited = doc_text.replace(row, row.replace(f"| {old}", f"| {new}", 1))
    problems = reference_problems(edited)
    assert len(problems) == 1 and problems[0].startswith(f"{table}.{key}:"), problems


def test_checker_sees_a_wrong_required_line(doc_text):
    edited = doc_text.replace("## [breaks]\n\n**Required.**", "## [breaks]\n\n**Optional.**")
    assert edited != doc_text
    assert reference_problems(edited)[0].startswith("[breaks]: the first line")


SHIPPED = sorted(PROTOCOLS_DIR.glob("*.toml"))


def test_protocols_are_shipped():
    assert len(SHIPPED) >= 9


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_protocol_parses_and_writes_documented_keys(doc_text, path):
    protocol = load_protocol(path)
    assert protocol.protocol.name == path.stem
    tables = parse_reference(doc_text)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    for table, keys in data.items():
        assert table in tables, f"{path.name}: [{table}] is not documented"
        undocumented = sorted(set(keys) - set(tables[table]["rows"]))
        assert not undocumented, f"{path.name}: [{table}] {undocumented} not documented"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_protocol_is_listed_in_the_reference(doc_text, path):
    assert f"| `{path.stem}` |" in doc_text
