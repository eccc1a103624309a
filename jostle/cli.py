"""The `jostle` command: run, check, repl, -c, and the durable budget ledger.

    jostle run FILE [--budget E] [--delta D] [--accounting pure|approximate|zcdp] [--rho R]
                    [--data NAME=PATH]... [--lifetime E[,D]] [--seed N]
                    [--ledger] [--ledger-db PATH] [--trace]
    jostle check FILE [--data NAME=PATH]...
    jostle repl [--budget E] ...        (also: bare `jostle`)
    jostle -c CODE [--budget E] ...
    jostle ledger [--db PATH] [show [--dataset FP] | export [--format csv|json] [--output FILE]
                               | reset --dataset NAME --yes [--reason TEXT] | verify
                               | lifetime --dataset NAME (E [--delta D] | --rho R) --reason TEXT [--yes]]

The session options may also come before the command (`jostle --budget 1 run f.jst`); an
option given both before and after with different values, or before a command that does not
take it (`check`, `ledger`), is a usage error.

Exit codes: 0 success, 2 usage, 3 syntax, 4 check, 5 privacy, 6 budget, 7 runtime,
8 data, 70 internal error (a bug in Jostle), 141 output pipe closed early (`jostle run f.jst |
head -1`: the reader stopped reading; the exit code a shell gives a tool killed by SIGPIPE,
without a message). A user error never shows a Python traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from pathlib import Path
from typing import Any, Sequence

from jostle.diagnostics.errors import InternalError, JostleError, UsageError

EXIT_CODES = {
    "ok": 0, "usage": 2, "syntax": 3, "check": 4, "privacy": 5, "budget": 6, "runtime": 7,
    "data": 8, "internal": InternalError.exit_code,
}
# The reader of our output went away (a pipe closed early): what a shell reports for a tool
# killed by SIGPIPE (128 + 13). Not an error of the user's, so not in EXIT_CODES.
CLOSED_PIPE = 128 + 13

SEED_WARNING = ("warning: --seed makes the noise reproducible; anyone who knows the seed can "
                "remove it. Never use a seed for a real release.")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: usage, exit 2
        self.print_usage(sys.stderr)
        sys.stderr.write(f"usage error: {message}\n   = hint: see `jostle --help`\n")
        raise SystemExit(EXIT_CODES["usage"])


# The options of a session, their defaults, and whether they may be repeated.
SESSION_OPTIONS = {"budget": None, "delta": 0.0, "accounting": None, "rho": None, "data": [], "dataset_names": [], "key": None, "lifetime": None, "seed": None,
                   "ledger": False,
                   "ledger_db": None,
                   "trace": False, "engine": "auto", "master": None}
_BEFORE = "before_"  # dest prefix of the options given before the command


def _session_options(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    """Add the session options. Their defaults are SUPPRESS so that a value given before the
    command is not overwritten by a subcommand's default; `_merge_options` fills them in."""
    def add(*flags: str, **kwargs) -> None:
        dest = prefix + kwargs.pop("dest", flags[0].lstrip("-").replace("-", "_"))
        parser.add_argument(*flags, dest=dest, default=argparse.SUPPRESS, **kwargs)

    add("--budget", type=float, metavar="E",
        help="the most epsilon this run may spend (a cap for the run; also the lifetime budget of "
             "data the ledger does not know yet, unless --lifetime is given)")
    add("--delta", type=float, metavar="D", help="the total delta (needed for gaussian releases)")
    add("--accounting", choices=("pure", "approximate", "zcdp"),
        help="how releases compose: pure or approximate (epsilon, delta) by basic composition (the "
             "default), or zcdp: composed in rho, the total --budget E --delta D converted by "
             "Canonne, Kamath and Steinke 2020 (see docs/accounting.md)")
    add("--rho", type=float, metavar="R", help="a zCDP total in rho (instead of --budget)")
    add("--data", action="append", metavar="NAME=PATH",
        help="bind a private table (a CSV or Parquet file); its schema comes from a .schema.json "
             "file beside it or from a `private NAME: {...}` declaration")
    add("--dataset", action="append", metavar="NAME=DATASET", dest="dataset_names",
        help="the name the durable ledger knows the table NAME (bound with --data) by; default NAME: "
             "bind every version of the same data under one name")
    add("--key", metavar="KEY",
        help="bind the tables given with --data as one database of entities named by the column KEY "
             "(the unit entity(KEY) for all of them, one dataset in the ledger): programs join them "
             "with a.join(b, on=\"KEY\")")
    add("--lifetime", metavar="E[,D]|rho:R",
        help="the lifetime budget (epsilon, epsilon,delta, or rho:R for one held in zCDP) of the tables "
             "bound with --data (refused "
             "if the ledger holds another), and of data the program loads that the ledger does not "
             "know yet: the most ever spent on it, across runs (the curator's; `jostle ledger "
             "lifetime` changes it later, logged)")
    add("--engine", choices=("auto", "pandas", "duckdb", "spark"),
        help="where private tables live: auto (default: small tables in memory, Parquet and large "
             "tables on DuckDB), pandas, duckdb (out of core), spark (local, or --master)")
    add("--master", metavar="URL",
        help="the Spark master for --engine spark (default local[*]), e.g. spark://host:7077")
    add("--seed", type=int, metavar="N",
        help="reproducible noise: UNSAFE for real releases (for tests and teaching)")
    add("--ledger", action="store_true", help="print this session's budget ledger at the end")
    add("--trace", action="store_true",
        help="print every ChoiceMaker dispatch at the end (noisy metafeatures, predictions, choice, budget split)")
    add("--ledger-db", metavar="PATH",
        help="the durable budget ledger (default $JOSTLE_LEDGER, else "
             "~/.local/share/jostle/ledger.sqlite; :memory: keeps nothing)")


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
    repl = commands.add_parser("repl", help="the interactive prompt", allow_abbrev=False)
    _session_options(repl)
    ledger = commands.add_parser("ledger", help="show, export, verify or reset the durable budget ledger",
                                 allow_abbrev=False)
    _db_option(ledger)
    actions = ledger.add_subparsers(dest="action", parser_class=_Parser)
    show = actions.add_parser("show", help="each dataset's balance and history (the default)", allow_abbrev=False)
    show.add_argument("--dataset", metavar="NAME", help="only this dataset (its name, or its fingerprint's start)")
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
    train = commands.add_parser("train", help="train the standard ChoiceMakers on public data and ship them "
                                "with the package (for Jostle's developers)", allow_abbrev=False)
    train.add_argument("--all", action="store_true", required=True,
                       help="every ChoiceMaker the standard library declares")
    train.add_argument("--jobs", type=int, default=-1, metavar="N", help="processes (default: every core)")
    return parser


def _merge_options(args: argparse.Namespace) -> None:
    """Combine the session options given before and after the command, or refuse them."""
    before = {name: getattr(args, _BEFORE + name) for name in SESSION_OPTIONS if hasattr(args, _BEFORE + name)}
    for name in SESSION_OPTIONS:
        if hasattr(args, _BEFORE + name):
            delattr(args, _BEFORE + name)
    flags = ", ".join("--" + name.replace("_", "-") for name in before)
    if args.command == "train" and before:
        raise UsageError("`jostle train` takes only --all and --jobs N",
                         hint="it trains on public corpora and touches no private data")
    if args.command in ("check", "ledger", "train") and before:
        allowed = {"ledger_db": "ledger", "data": "check"}
        refused = [name for name in before if allowed.get(name) != args.command]
        if refused:
            flags = ", ".join("--" + name.replace("_", "-") for name in refused)
            raise UsageError(f"`jostle {args.command}` does not take {flags}",
                             hint="check touches no data and spends nothing; it takes only --data "
                                  "NAME=PATH, to read the table's schema" if args.command == "check"
                             else "the ledger command takes only --db PATH")
        if args.command == "check":
            args.data = before["data"] + getattr(args, "data", [])
        elif not hasattr(args, "db"):
            args.db = before["ledger_db"]
        return
    if args.command == "check" and not hasattr(args, "data"):
        args.data = []
    if args.command is not None and args.code is not None:
        raise UsageError(f"-c CODE cannot be combined with the `{args.command}` command")
    for name, default in SESSION_OPTIONS.items():
        if name in ("data", "dataset_names"):  # repeatable: given before and after, all apply
            setattr(args, name, before.get(name, []) + getattr(args, name, []))
            continue
        if name in before and hasattr(args, name) and getattr(args, name) != before[name]:
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} was given twice, before and after `{args.command}`, with different values",
                             hint=f"give {flag} once")
        setattr(args, name, getattr(args, name, before.get(name, default)))


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
    if args.master is not None and args.engine != "spark":
        raise UsageError("--master is the Spark master: it needs --engine spark",
                         hint="run with --engine spark --master URL")
    options = {"spark": {"master": args.master}} if args.master is not None else None
    session = Session(budget=args.budget, delta=args.delta, seed=args.seed, ledger_path=args.ledger_db,
                      engine=args.engine, engine_options=options, lifetime=_lifetime_option(args.lifetime),
                      accounting=args.accounting, rho=args.rho)
    datasets = _dataset_names(args.dataset_names, args.data)
    units = _unit_options(getattr(args, "units", []), args.data)
    seen: set[str] = set()
    for binding in args.data:
        name, sep, path = binding.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--data takes NAME=PATH, got {binding!r}",
                             hint="for example --data patients=patients.csv")
        if name in seen:
            raise UsageError(f"--data {name}=... is given twice: each table is bound once", hint="give each table one --data NAME=PATH")
        seen.add(name)
        if args.key is not None:
            continue  # bound below, all together
        # --lifetime declares the lifetime of the tables bound here (refused at bind if the ledger
        # holds another), and is the default for data the program loads itself (Session(lifetime=)).
        session.bind_private(name, path, dataset=datasets.get(name), lifetime=_lifetime_option(args.lifetime),
                             unit=units.get(name))
    if args.key is not None:
        _bind_database(session, args, datasets, units)
    return session


def _bind_database(session: Any, args: argparse.Namespace, datasets: dict[str, str], units: dict[str, str]) -> None:
    """--data NAME=PATH ... --key KEY: the tables bound as one database (Session.bind_database)."""
    if not args.data:
        raise UsageError("--key names the entity key of the tables given with --data, but no --data was given",
                         hint="for example --data trains=trains.csv --data cars=cars.csv --key train_id")
    if units:
        raise UsageError("--unit and --key were both given: the tables of a database are all bound under "
                         f"entity({args.key})", hint="drop --unit")
    names = set(datasets.values())
    if len(names) > 1:
        raise UsageError(f"--dataset gives the database several names ({', '.join(sorted(names))})",
                         hint="the tables bound with --key are one dataset: give it one name")
    tables = {binding.partition("=")[0]: binding.partition("=")[2] for binding in args.data}
    session.bind_database(tables, args.key, dataset=names.pop() if names else None,
                          lifetime=_lifetime_option(args.lifetime))


def _per_table_options(flag: str, given: list[str], data: list[str], example: str) -> dict[str, str]:
    """`--FLAG NAME=VALUE` options about tables bound with --data NAME=PATH: each names a bound
    table once, with a non-empty value (checked further where it is used)."""
    bound = {binding.partition("=")[0] for binding in data}
    values: dict[str, str] = {}
    for item in given:
        table, sep, value = item.partition("=")
        if not sep or not table or not value.strip():
            raise UsageError(f"--{flag} takes NAME={flag.upper()}, got {item!r}", hint=f"for example {example}")
        if table not in bound:
            raise UsageError(f"--{flag} names the table {table!r}, which no --data binds",
                             hint=f"add --data {table}=PATH")
        if table in values:
            raise UsageError(f"--{flag} {table}=... is given twice")
        values[table] = value
    return values


def _unit_options(given: list[str], data: list[str]) -> dict[str, str]:
    """--unit NAME=UNIT for tables bound with --data NAME=PATH (the unit is checked at bind)."""
    units = _per_table_options("unit", given, data, "--data visits=visits.csv --unit visits=entity:patient_id")
    return {table: unit.strip() for table, unit in units.items()}


def _dataset_names(given: list[str], data: list[str]) -> dict[str, str]:
    """--dataset NAME=DATASET for tables bound with --data NAME=PATH."""
    return _per_table_options("dataset", given, data, "--data patients=p.csv --dataset patients=patients-2026")


def _lifetime_option(text: str | None) -> tuple[float, float] | dict[str, float] | None:
    """--lifetime E, E,D or rho:R as numbers (validated as a budget by the Session)."""
    if text is None:
        return None
    try:
        if text.strip().lower().startswith("rho:"):
            return {"rho": float(text.strip()[4:])}
        epsilon, _, delta = text.partition(",")
        return float(epsilon), float(delta) if delta else 0.0
    except ValueError:
        raise UsageError(f"--lifetime takes E, E,D or rho:R, got {text!r}",
                         hint="for example --lifetime 3, --lifetime 3,1e-6 or --lifetime rho:0.5") from None


def _finish(session, args: argparse.Namespace) -> None:
    if session is not None and getattr(args, "trace", False):
        from jostle.language.choice import ChoiceMaker, explain

        makers = [v for v in session.interpreter.globals.values.values() if isinstance(v, ChoiceMaker)]
        sys.stdout.flush()
        # Post-processing of released values only (see jostle.language.choice): safe to show.
        print("\n".join(explain(m) for m in makers) if makers else "(no ChoiceMaker in this program)")
    if session is not None and getattr(args, "ledger", False):
        sys.stdout.flush()
        print(session.ledger)
    # The session is not closed: every charge is already committed, the process is about to
    # end, and in-process callers (tests) may still read its ledger.


# ---------------------------------------------------------------- jostle ledger
def _open_ledger(args: argparse.Namespace, create: bool):
    from jostle.privacy.ledger_store import LedgerStore, resolve_ledger_path

    return LedgerStore(resolve_ledger_path(getattr(args, "db", None)), create=create)


def _show(store, dataset: str | None) -> str:
    from jostle.privacy.ledger_text import render_store

    return render_store(store, dataset)


def _lifetime_json(lifetime) -> list[str] | dict[str, str] | None:
    """A lifetime in the JSON export: [epsilon, delta] as before, or {"rho": R} for one in rho."""
    from jostle.privacy.measures import RhoZCDPBudget

    if lifetime is None:
        return None
    if isinstance(lifetime, RhoZCDPBudget):
        return {"rho": str(lifetime.rho)}
    return [str(lifetime.epsilon), str(lifetime.delta)]


def _export(store, form: str) -> str:
    import csv
    import io
    import json

    from jostle.privacy.ledger_store import EXPORT_FIELDS

    rows = store.export_rows()
    if form == "json":
        datasets = [{
            "fingerprint": d.fingerprint, "name": d.name, "label": d.label, "unit": d.unit, "columns": list(d.columns),
            "lifetime": _lifetime_json(store.lifetime(d.fingerprint)),
            "first_seen": d.first_seen, "spent_epsilon": str(store.spent(d.fingerprint).dp.epsilon),
            "spent_delta": str(store.spent(d.fingerprint).dp.delta), "spent_rho": str(store.spent(d.fingerprint).rho),
        } for d in store.datasets()]
        document = {"ledger": store.path, "problems": store.verify(), "datasets": datasets, "events": rows}
        return json.dumps(document, indent=2) + "\n"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def ledger_command(args: argparse.Namespace) -> int:
    """`jostle ledger [show|export|reset|verify|lifetime]`; returns the exit code."""
    from jostle.diagnostics.errors import DataError
    from jostle.privacy.ledger_store import MEMORY, LedgerStore

    action = args.action or "show"
    if action == "reset" and not args.yes:
        raise UsageError("`jostle ledger reset` needs --yes",
                         hint="a reset lets the data be queried again as if nothing had been released; "
                              "it is logged in the ledger")
    from jostle.privacy.ledger_store import resolve_ledger_path

    path = resolve_ledger_path(getattr(args, "db", None))
    try:
        store = _open_ledger(args, create=False)
    except DataError:
        # Only a ledger that does not exist yet reads as empty (and none is created); a file
        # that exists but cannot be opened as a ledger is an error, never an empty history.
        if action in ("reset", "lifetime") or (str(path) != MEMORY and Path(path).exists()):
            raise
        store = LedgerStore(MEMORY)
    with store:
        if action == "show":
            print(_show(store, getattr(args, "dataset", None)))
        elif action == "export":
            text = _export(store, args.format)
            if args.output:
                target = Path(args.output)
                try:
                    target.write_text(text, encoding="utf-8")
                except OSError as error:
                    raise UsageError(f"cannot write {target}: {error.strerror}",
                                     hint="give --output a file path in an existing folder") from None
            else:
                sys.stdout.write(text)
        elif action == "verify":
            problems = store.verify()
            for problem in problems:
                print(problem)
            if problems:
                raise DataError(f"the budget ledger {store.path} fails verification ({len(problems)} problems)",
                                hint="it was edited outside Jostle; keep it and investigate before trusting it")
            count = len(store.datasets())
            print(f"{store.path}: ok ({len(store.events())} events about {count} dataset{'s' * (count != 1)})")
        elif action == "lifetime":
            from jostle.privacy.ledger_text import change_lifetime

            print(change_lifetime(store, args.dataset, args.epsilon, args.delta, args.rho, args.reason, args.yes))
        else:
            dataset = store.resolve(args.dataset)
            event = store.reset(dataset.fingerprint, args.reason, confirmed=args.yes)
            from jostle.privacy.ledger_text import written_off

            print(f"reset dataset '{dataset.shown}': wrote off {written_off(event)}; logged as: {event['note']}")
    return 0


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
    from jostle.data.schema import read_schema_file, schema_file_for
    from jostle.diagnostics.errors import CheckError
    from jostle.language.checker import check
    from jostle.language.parser import parse
    from jostle.session import Session

    path = Path(args.file)
    text = _read_program(path)
    known: set[str] = set()
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
            read_schema_file(schema_file)  # a broken schema file is the same DataError a run gives
            known.add(name)
        else:  # the shape of Interpreter.bindings: (frame, schema, public_rows, path)
            pending[name] = (None, None, False, data)
    session = Session(ledger_path=":memory:")  # touches no data, no ledger
    program = parse(text, str(path))
    names = set(session.interpreter.globals.values) | known
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
        if args.command == "train":
            from jostle.build import build_all

            build_all(n_jobs=args.jobs, progress=True)
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
