"""The command line's session options: their flags (`_session_options`, given before or after
the command), how the two combine or are refused (`_merge_options`), the `Session` they make
with the data of --data bound, by table or as one database (`_session`), and what it prints
when the run ends (`_finish`: --trace, --ledger).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jostle.diagnostics.errors import UsageError

SEED_WARNING = ("warning: --seed makes the noise reproducible; anyone who knows the seed can "
                "remove it. Never use a seed for a real release.")



# The options of a session, their defaults, and whether they may be repeated.
SESSION_OPTIONS = {"budget": None, "delta": 0.0, "accounting": None, "rho": None, "data": [], "dataset_names": [], "key": None, "lifetime": None, "seed": None,
                   "ledger": False,
                   "ledger_db": None,
                   "trace": False, "engine": "auto", "master": None, "no_dry_run": False}
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
    add("--no-dry-run", action="store_true",
        help="skip the dry run on public stand-ins of the private tables that runs a program once "
             "before anything is charged (docs/language.md, \"Before spending\")")
    add("--ledger-db", metavar="PATH",
        help="the durable budget ledger (default $JOSTLE_LEDGER, else "
             "~/.local/share/jostle/ledger.sqlite; :memory: keeps nothing)")


def _merge_options(args: argparse.Namespace) -> None:
    """Combine the session options given before and after the command, or refuse them."""
    before = {name: getattr(args, _BEFORE + name) for name in SESSION_OPTIONS if hasattr(args, _BEFORE + name)}
    for name in SESSION_OPTIONS:
        if hasattr(args, _BEFORE + name):
            delattr(args, _BEFORE + name)
    flags = ", ".join("--" + name.replace("_", "-") for name in before)
    if args.command == "schema" and before:
        raise UsageError(f"`jostle schema draft` does not take {flags}",
                         hint="it reads the data file you name and writes a draft schema; it runs no program")
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
                      accounting=args.accounting, rho=args.rho, dry_run=not args.no_dry_run)
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
