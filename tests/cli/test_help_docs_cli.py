"""What a user reads names no documentation file that an installed lensopt lacks: the wheel ships no
docs/ folder (nor the science's METHOD.md), so a help text or a message names a docs page as
"docs/NAME.md in the source", a page of the source archive and the repository."""

import argparse
import ast
import re
from pathlib import Path

from lensopt.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "lensopt"

#: A mention of a Markdown file, with what follows it.
MD_FILE = re.compile(r"(?P<name>[\w./-]*\.md)\b(?P<after>.{0,14})", re.DOTALL)
SOURCE_DOC = re.compile(r"docs/[\w.-]+\.md")


def _parsers(parser: argparse.ArgumentParser, path=("lensopt",)):
    yield " ".join(path), parser
    for action in parser._actions:  # argparse keeps its subparsers here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _bad_mentions(text: str) -> list[str]:
    """The Markdown files ``text`` names other than as an existing "docs/NAME.md in the source"."""
    bad = []
    for match in MD_FILE.finditer(text):
        name = match.group("name")
        in_source = " ".join(match.group("after").split()).startswith("in the source")
        if not (SOURCE_DOC.fullmatch(name) and in_source and (REPO / name).is_file()):
            bad.append(name)
    return bad


def _user_strings(path: Path):
    """``(line, text)`` of the string literals of a module that are not docstrings (f-strings'
    literal parts included); a bare file name (``"ranking.md"``, a file lensopt writes) is left out."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    for node in ast.walk(tree):
        literal = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        if literal and not re.fullmatch(r"[\w.-]+", node.value):
            yield node.lineno, node.value


def test_no_help_text_names_a_docs_file_the_installed_wheel_lacks():
    parsers = list(_parsers(build_parser()))
    assert len(parsers) >= 15, [path for path, _ in parsers]
    bad = {path: found for path, parser in parsers if (found := _bad_mentions(parser.format_help()))}
    assert not bad, f"help names docs files a `pip install lensopt` does not have: {bad}"


def test_help_names_a_docs_page_as_one_of_the_source():
    help_text = dict(_parsers(build_parser()))["lensopt export"].format_help()
    assert "docs/data-dictionary.md in the source" in " ".join(help_text.split())


def test_no_message_of_the_package_names_a_docs_file_the_installed_wheel_lacks():
    bad = [
        f"{path.relative_to(REPO)}:{line}: {found}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, text in _user_strings(path)
        if (found := _bad_mentions(text))
    ]
    assert not bad, "\n".join(bad)
