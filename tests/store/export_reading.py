"""Reading lensopt's exports back, as an analyst would: the stored values from the CSV cells, and
pandas' view of every format (shared by the store tests)."""

import io
import json

import pandas as pd

#: Columns that hold text (or ISO times); every other column of a CSV export is a number.
TEXT_COLUMNS = {
    "participant",
    "kind",
    "eye",
    "letter",
    "letters",
    "response",
    "answer",
    "presented_at_utc",
    "answered_at_utc",
    "asked_lens",
    "note",
    "date",
    "expName",
    "psychopyVersion",
    "text",
    "extra_letter",
    "observer",
    "rule",
    "protocol",
    "alphabet",
}

#: Fixed columns of any kind (an ``extra`` value of the same name gets the ``extra_`` prefix).
FIXED_NAMES = {"letter", "letters", "kind", "eye", "answer", "response", "correct", "void", "index", "trial_index"}


def cell_value(text: str):
    """A CSV cell as the value it was written from: None if empty, else an int, a float or text."""
    if text == "":
        return None
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    return text


def extra_from_row(row: dict, template, path=()) -> object:
    """The trial's ``extra`` re-assembled from its flattened columns in the shape of ``template``
    (the stored ``extra``: the CSV holds the values, the JSON the shape)."""
    if isinstance(template, dict):
        return {key: extra_from_row(row, value, (*path, key)) for key, value in template.items()}
    if isinstance(template, list):
        return [extra_from_row(row, value, (*path, k)) for k, value in enumerate(template, start=1)]
    name = "_".join(str(part) for part in path)
    name = f"extra_{name}" if name in FIXED_NAMES else name
    value = cell_value(row[name])
    return "" if value is None and template == "" else value


def assert_tidy_csv(text: str) -> pd.DataFrame:
    """pandas reads ``text`` (a CSV export) with a numeric dtype for every number column, ISO
    times that equal the unix seconds, and no cell starting with ``[`` or ``{`` (no JSON)."""
    frame = pd.read_csv(io.StringIO(text), keep_default_na=True)
    for column in frame.columns:
        if column not in TEXT_COLUMNS:
            assert pd.api.types.is_numeric_dtype(frame[column]), (column, frame[column].dtype)
        cells = frame[column].dropna().astype(str)
        assert not cells.str.startswith(("[", "{")).any(), column
    for moment in ("presented_at", "answered_at"):
        iso = pd.to_datetime(frame[f"{moment}_utc"], utc=True, format="ISO8601")
        unix = pd.to_datetime(frame[f"{moment}_s"], unit="s", utc=True)
        assert ((iso - unix).abs() <= pd.Timedelta(microseconds=1)).all()
    return frame


def assert_tidy_json(text: str) -> pd.DataFrame:
    """pandas reads the trials of ``text`` (a JSON export of one session) with numeric dtypes for
    the numbers, and no text cell holds JSON (lists and objects stay lists and dicts)."""
    frame = pd.json_normalize(json.loads(text)["trials"])
    for column in frame.columns:
        values = frame[column].dropna()
        if len(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            assert pd.api.types.is_numeric_dtype(frame[column]), (column, frame[column].dtype)
        assert not any(isinstance(v, str) and v.startswith(("[", "{")) for v in values), column
    return frame
