"""The `jostle` command: run, check, repl, and -c.

    jostle run FILE [--budget E] [--delta D] [--data NAME=PATH]... [--seed N] [--ledger]
    jostle check FILE
    jostle repl [--budget E] ...        (also: bare `jostle`)
    jostle -c CODE [--budget E] ...

Exit codes: 0 success, 2 usage, 3 syntax, 4 check, 5 privacy, 6 budget, 7 runtime,
8 data, 70 internal error (a bug in Jostle). A user error never shows a Python traceback.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import Sequence

from jostle.errors import InternalError, JostleError, UsageError

EXIT_CODES = {
    "ok": 0, "usage": 2, "syntax": 3, "check": 4, "privacy": 5, "budget": 6, "runtime": 7,
    "data": 8, "internal": InternalError.exit_code,
}

SEED_WARNING = ("warning: --seed makes the noise reproducible; anyone who knows the seed can "
                "remove it. Never use a seed for a real release.")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: usage, exit 2
        self.print_usage(sys.stderr)
        sys.stderr.write(f"usage error: {message}\n   = hint: see `jostle --help`\n")
        raise SystemExit(EXIT_CODES["usage"])


def _budget_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--budget", type=float, metavar="E",
                        help="the total epsilon the program may spend")
    parser.add_argument("--delta", type=float, default=0.0, metavar="D",
                        help="the total delta (needed for gaussian releases)")
    parser.add_argument("--data", action="append", default=[], metavar="NAME=PATH",
                        help="bind a private CSV table; its schema comes from NAME.schema.json "
                             "beside it or from a `private NAME: {...}` declaration")
    parser.add_argument("--seed", type=int, metavar="N",
                        help="reproducible noise: UNSAFE for real releases (for tests and teaching)")
    parser.add_argument("--ledger", action="store_true", help="print the budget ledger at the end")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jostle", description="Jostle: differentially private programs.")
    parser.add_argument("-c", dest="code", metavar="CODE", help="run CODE and exit")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    _budget_options(parser)
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)
    run = commands.add_parser("run", help="run a .jst program")
    run.add_argument("file", help="the program")
    _budget_options(run)
    check = commands.add_parser("check", help="parse and check a program without touching data")
    check.add_argument("file", help="the program")
    repl = commands.add_parser("repl", help="the interactive prompt")
    _budget_options(repl)
    return parser


def _session(args: argparse.Namespace):
    from jostle.session import Session

    if args.seed is not None:
        sys.stderr.write(SEED_WARNING + "\n")
    if args.budget is not None and not args.budget > 0:
        raise UsageError(f"--budget must be greater than 0, got {args.budget}")
    if not 0 <= args.delta < 1:
        raise UsageError(f"--delta must be in [0, 1), got {args.delta}")
    if args.delta and args.budget is None:
        raise UsageError("--delta needs --budget")
    session = Session(budget=args.budget, delta=args.delta, seed=args.seed)
    for binding in args.data:
        name, sep, path = binding.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--data takes NAME=PATH, got {binding!r}",
                             hint="for example --data patients=patients.csv")
        session.bind_private(name, path)
    return session


def _finish(session, args: argparse.Namespace) -> None:
    if session is not None and getattr(args, "ledger", False):
        sys.stdout.flush()
        print(session.ledger)


def _report(error: BaseException) -> int:
    if isinstance(error, JostleError):
        sys.stdout.flush()
        sys.stderr.write(error.render() + "\n")
        return error.exit_code
    sys.stdout.flush()
    sys.stderr.write(
        f"internal error: {type(error).__name__}: {error}\n"
        "This is a bug in Jostle, not in your program. Please report it with the traceback below.\n"
    )
    traceback.print_exception(error, file=sys.stderr, limit=-25)
    return EXIT_CODES["internal"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `jostle` command; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    if args.version:
        from jostle import __version__

        print(f"jostle {__version__}")
        return 0
    session = None
    try:
        if args.command == "check":
            from jostle.session import Session

            path = Path(args.file)
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as error:
                raise UsageError(f"cannot read {path}: {error.strerror}") from None
            Session(ledger_path=":memory:").check(text, str(path))  # touches no data, no ledger
            print(f"{path}: ok")
            return 0
        if args.command == "run":
            session = _session(args)
            session.run_file(args.file)
            return 0
        if args.code is not None:
            session = _session(args)
            session.run(args.code, "<command line>")
            return 0
        from jostle.repl import run_repl

        session = _session(args)
        return run_repl(session)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BaseException as error:  # every error ends here: rendered, never a raw traceback
        if isinstance(error, SystemExit):
            return int(error.code or 0)
        return _report(error)
    finally:
        try:
            _finish(session, args)
        except BaseException as error:  # pragma: no cover - printing the ledger failed
            _report(error)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
