"""The `jostle` command: run, check, repl, -c, and the durable budget ledger.

    jostle run FILE [--budget E] [--delta D] [--accounting pure|approximate|zcdp] [--rho R]
                    [--data NAME=PATH]... [--lifetime E[,D]] [--seed N]
                    [--ledger] [--ledger-db PATH] [--trace]
    jostle check FILE [--data NAME=PATH]... [--cost [--budget E] [--delta D] [--accounting A] [--rho R]]
    jostle repl [--budget E] ...        (also: bare `jostle`)
    jostle -c CODE [--budget E] ...
    jostle schema draft DATA [--output FILE|-] [--max-categories N] [--force]   (the curator's tool)
    jostle ledger [--db PATH] [show [--dataset FP] [--summary] | export [--format csv|json] [--output FILE]
                               | reset --dataset NAME --yes [--reason TEXT] | verify
                               | lifetime --dataset NAME (E [--delta D] | --rho R) --reason TEXT [--yes]]

The session options may also come before the command (`jostle --budget 1 run f.jst`); an
option given both before and after with different values, or before a command that does not
take it (`check`, `ledger`), is a usage error.

Exit codes: 0 success, 2 usage, 3 syntax, 4 check, 5 privacy, 6 budget, 7 runtime,
8 data, 70 internal error (a bug in Jostle), 141 output pipe closed early (`jostle run f.jst |
head -1`: the reader stopped reading; the exit code a shell gives a tool killed by SIGPIPE,
without a message). A user error never shows a Python traceback.

The session options and the Session they make are in `jostle.cli.session_options`, the ledger
command in `jostle.cli.ledger`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from pathlib import Path
from typing import Sequence

from jostle.cli.cost import COST_OPTIONS, add_cost_options, cost_command
from jostle.cli.ledger import ledger_command
from jostle.cli.schema_draft import add_schema_parser, schema_command
from jostle.cli.session_options import (  # noqa: F401 (SESSION_OPTIONS and SEED_WARNING re-exported)
    _BEFORE, SEED_WARNING, SESSION_OPTIONS, _finish, _merge_options, _session, _session_options,
)
from jostle.diagnostics.errors import InternalError, JostleError, UsageError

EXIT_CODES = {
    "ok": 0, "usage": 2, "syntax": 3, "check": 4, "privacy": 5, "budget": 6, "runtime": 7,
    "data": 8, "internal": InternalError.exit_code,
}
# The reader of our output went away (a pipe closed early): what a shell reports for a tool
# killed by SIGPIPE (128 + 13). Not an error of the user's, so not in EXIT_CODES.
CLOSED_PIPE = 128 + 13

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: usage, exit 2
        self.print_usage(sys.stderr)
        sys.stderr.write(f"usage error: {message}\n   = hint: see `jostle --help`\n")
        raise SystemExit(EXIT_CODES["usage"])


def _db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", "--ledger-db", dest="db", metavar="PATH", default=argparse.SUPPRESS,
                        help="the ledger file (default $JOSTLE_LEDGER, else ~/.local/share/jostle/ledger.sqlite)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jostle", description="Jostle: differentially private programs.", allow_abbrev=False)
    parser.add_argument("-c", dest="code", metavar="CODE", help="run CODE and exit")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    _session_options(parser, _BEFORE)
    commands = parser.add_subparsers(dest="command", parser_class=_Parser)
    run = commands.add_parser("run", help="run a .jst program", allow_abbrev=False)
    run.add_argument("file", help="the program")
    _session_options(run)
    run.add_argument("--unit", action="append", default=[], metavar="NAME=UNIT", dest="units",
                     help="the privacy unit of the table NAME (bound with --data): row (the default), "
                          "entity:KEY (every row of one KEY value together; bound rows per key with "
                          "t.bound_per_key(k)) or replace_one (the row count is public); default: "
                          "\"privacy_unit\" in its schema file")
    check = commands.add_parser("check", help="parse and check a program without touching data",
                                allow_abbrev=False)
    check.add_argument("file", help="the program")
    check.add_argument("--data", action="append", default=argparse.SUPPRESS, metavar="NAME=PATH",
                       help="a private table the run will bind with --data NAME=PATH: check reads "
                            "only its schema file (PATH.schema.json beside a CSV, or PATH itself "
                            "if it is a .json schema file), never its rows")
    add_cost_options(check)
    repl = commands.add_parser("repl", help="the interactive prompt", allow_abbrev=False)
    _session_options(repl)
    ledger = commands.add_parser("ledger", help="show, export, verify or reset the durable budget ledger",
                                 allow_abbrev=False)
    _db_option(ledger)
    actions = ledger.add_subparsers(dest="action", parser_class=_Parser)
    show = actions.add_parser("show", help="each dataset's balance and history (the default)", allow_abbrev=False)
    show.add_argument("--dataset", metavar="NAME", help="only this dataset (its name, or its fingerprint's start)")
    show.add_argument("--summary", action="store_true",
                      help="one line per dataset (releases, spent per measure, lifetime, left) and totals "
                           "per mechanism, instead of every event")
    export = actions.add_parser("export", help="every event, as CSV or JSON", allow_abbrev=False)
    export.add_argument("--format", choices=("csv", "json"), default="csv")
    export.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")
    reset = actions.add_parser("reset", help="write a dataset's balance off (logged; needs --yes)",
                               allow_abbrev=False)
    reset.add_argument("--dataset", metavar="NAME", required=True,
                       help="the dataset's name (or its fingerprint's start)")
    reset.add_argument("--yes", action="store_true", help="confirm: the data may then be queried again")
    reset.add_argument("--reason", default="no reason given", help="why (kept in the ledger)")
    verify = actions.add_parser("verify", help="check the hash chain and the balances", allow_abbrev=False)
    lifetime = actions.add_parser("lifetime", help="change a dataset's lifetime budget, keeping what was spent "
                                  "(logged; raising it needs --yes)", allow_abbrev=False)
    lifetime.add_argument("--dataset", metavar="NAME", required=True,
                          help="the dataset's name (or its fingerprint's start)")
    lifetime.add_argument("epsilon", type=float, nargs="?", default=None, help="the new lifetime epsilon")
    lifetime.add_argument("--delta", type=float, default=None,
                          help="the new lifetime delta (default: keep the current one)")
    lifetime.add_argument("--rho", type=float, default=None,
                          help="a new lifetime held in zCDP, in rho (instead of EPSILON)")
    lifetime.add_argument("--reason", required=True, help="why (kept in the ledger)")
    lifetime.add_argument("--yes", action="store_true", help="confirm a raise")
    for action in (show, export, reset, verify, lifetime):
        _db_option(action)
    add_schema_parser(commands, _Parser)
    train = commands.add_parser("train", help="train the standard ChoiceMakers on public data and ship them "
                                "with the package (for Jostle's developers)", allow_abbrev=False)
    train.add_argument("--all", action="store_true", required=True,
                       help="every ChoiceMaker the standard library declares")
    train.add_argument("--jobs", type=int, default=-1, metavar="N", help="processes (default: every core)")
    train.add_argument("--only", action="append", default=None, metavar="LABEL",
                       help="train only this one (module.name, e.g. trees.chooser; repeatable); the others "
                       "stay as shipped")
    return parser


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
    """Entry point of the `jostle` command; returns the process exit code.

    Output piped into a reader that stops early (`jostle run f.jst | head -1`) ends the run
    quietly with exit code 141, as a tool killed by SIGPIPE would (see `_output_closed`).
    """
    try:
        code = _main(argv)
        sys.stdout.flush()  # a closed pipe fails here rather than at interpreter exit
        return code
    except BrokenPipeError:
        return _output_closed()


def _output_closed() -> int:
    """The reader of our output closed the pipe: stop writing, quietly.

    As the Python documentation advises (library/signal.html, "Note on SIGPIPE"), the closed
    stream is pointed at os.devnull so that the interpreter's final flush of what is still
    buffered fails silently instead of printing "Exception ignored ... BrokenPipeError".
    Everything charged before is committed in the ledger; nothing is reported, because no one
    is reading. Returns 141 (128 + SIGPIPE), what a shell shows for `yes | head -1`.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            try:
                os.dup2(devnull, stream.fileno())
            except (OSError, ValueError, AttributeError):  # not a real file (an in-process caller's buffer)
                pass
    os.close(devnull)
    return CLOSED_PIPE


def _read_program(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text", hint="save the program as UTF-8") from None


def check_command(args: argparse.Namespace) -> int:
    """`jostle check FILE [--data NAME=PATH]...`: parse and check, touching no data and no ledger.

    A table the run will bind with `--data NAME=PATH` is known to the check when the same
    option is given: its schema is read from the schema file (PATH.schema.json beside the CSV,
    or PATH itself when it is a .json file), never its rows. Without a schema file the name is
    pending, as in a run: the program must declare it (`private NAME: {...}`). Returns 0.
    """
    from jostle.data.schema import read_schema_declaration, schema_file_for
    from jostle.diagnostics.errors import CheckError
    from jostle.language.checker import check
    from jostle.language.parser import parse
    from jostle.session import Session

    path = Path(args.file)
    text = _read_program(path)
    known: dict[str, object] = {}
    pending: dict[str, tuple] = {}
    for binding in args.data:
        name, sep, data = binding.partition("=")
        if not sep or not name or not data:
            raise UsageError(f"--data takes NAME=PATH, got {binding!r}",
                             hint="for example --data patients=patients.csv")
        if name in known or name in pending:
            raise UsageError(f"--data {name}=... is given twice: each table is bound once",
                             hint="give each table one --data NAME=PATH")
        schema_file = Path(data) if data.endswith(".json") else schema_file_for(Path(data))
        if schema_file.is_file():
            # a broken schema file is the same DataError a run gives
            known[name] = read_schema_declaration(schema_file)
        else:  # the shape of Interpreter.bindings: (frame, schema, public_rows, path)
            pending[name] = (None, None, False, data)
    session = Session(ledger_path=":memory:")  # touches no data, no ledger
    program = parse(text, str(path))
    given = [f"--{option}" for option in COST_OPTIONS if getattr(args, option, None) is not None]
    if given and not args.cost:
        raise UsageError(f"{', '.join(given)} is read only with --cost", hint=f"jostle check {path} --cost {given[0]} ...")
    names = set(session.interpreter.globals.values) | set(known)
    try:
        check(program, session.interpreter.builtins.values, names, pending)
    except CheckError as error:
        undefined = re.fullmatch(r"'(\w+)' is not defined", error.message)
        if undefined and undefined.group(1) not in pending:
            name = undefined.group(1)
            error.notes.append((
                f"if {name} is a private table given at run time (`jostle run {path} --data "
                f"{name}=PATH`), give `jostle check` the same --data: it reads only the table's "
                "schema file, never its rows", None))
        raise
    if args.cost:
        return cost_command(args, program, known, pending)
    print(f"{path}: ok")
    return 0


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    try:
        _merge_options(args)
    except UsageError as error:
        parser.print_usage(sys.stderr)
        return _report(error)
    if args.version:
        from jostle import __version__

        print(f"jostle {__version__}")
        return 0
    session = None
    try:
        if args.command == "check":
            return check_command(args)
        if args.command == "ledger":
            return ledger_command(args)
        if args.command == "schema":
            return schema_command(args)
        if args.command == "train":
            from jostle.build import UnknownChoiceMaker, build_all

            try:
                build_all(n_jobs=args.jobs, progress=True, only=args.only)
            except UnknownChoiceMaker as error:
                print(f"jostle train: {error}", file=sys.stderr)
                return 2
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
        if isinstance(error, BrokenPipeError):  # the reader of our output went away: see main()
            raise
        return _report(error)
    finally:
        try:
            _finish(session, args)
        except BrokenPipeError:
            raise
        except BaseException as error:  # pragma: no cover - printing the ledger failed
            _report(error)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
