"""The commands' parsers name their handlers (lensopt.cli.arguments.Handler) without importing them:
every name must lead to a handler, and building the parser must import none."""

import argparse
import inspect
import subprocess
import sys

import pytest

from lensopt.cli import build_parser
from lensopt.cli.arguments import Handler


def _handlers(parser: argparse.ArgumentParser, path=("lensopt",)):
    """``(command path, handler)`` of every parser and subparser that sets one."""
    handler = parser.get_default("handler")
    if handler is not None:
        yield " ".join(path), handler
    for action in parser._actions:  # argparse keeps its subparsers here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _handlers(sub, (*path, name))


def test_every_command_names_a_handler_that_exists_and_takes_the_arguments():
    named = [(path, h) for path, h in _handlers(build_parser()) if isinstance(h, Handler)]
    assert len(named) >= 15, named  # simulate, run, sessions, export, ..., every bench campaign
    for path, handler in named:
        module, _, name = handler.target.partition(":")
        assert module.startswith("lensopt.cli.handlers."), path
        function = getattr(__import__(module, fromlist=[name]), name, None)
        assert callable(function), f"`{path}` names {handler.target}, which does not exist"
        assert list(inspect.signature(function).parameters) == ["args"], path


def test_building_the_parser_imports_no_handler():
    code = (
        "import sys; from lensopt.cli import build_parser; build_parser().format_help(); "
        "print(' '.join(m for m in sys.modules if m.startswith('lensopt.cli.handlers')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_a_handler_runs_its_function_with_the_arguments(monkeypatch):
    import lensopt.cli.handlers.sessions as sessions

    seen = []
    monkeypatch.setattr(sessions, "list_sessions", lambda args: seen.append(args) or 7)
    assert Handler("lensopt.cli.handlers.sessions:list_sessions")("the args") == 7 and seen == ["the args"]
    with pytest.raises(AttributeError, match="has no attribute 'no_such_handler'"):
        Handler("lensopt.cli.handlers.sessions:no_such_handler")(None)
