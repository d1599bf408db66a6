"""The shape of a command-line refusal, shared by the CLI's tests: exit 2, one line, no traceback."""

from lensopt.cli import main


def refused(capsys, argv) -> str:
    """Run ``lensopt ARGV`` in this process; assert exit 2, one stderr line, no traceback; the line."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusals
        code = exc.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]
