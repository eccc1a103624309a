"""`jostle check FILE --cost`: the cost report (jostle.language.cost_report) on the command line.

The report comes from a dry run on public stand-ins (jostle.language.dry_run): the tables given
with `--data NAME=PATH` are known by their schema files alone (never their rows; a table without
a schema file is pending, as in a run: the program declares it), and a program's own `load` is a
stand-in too. The session's total, when the run will have one, is given as in a run (`--budget
E [--delta D] [--accounting zcdp] | --rho R`); otherwise the program's `budget` statement caps it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

COST_OPTIONS = ("budget", "delta", "accounting", "rho")


def add_cost_options(check: argparse.ArgumentParser) -> None:
    """The options of `jostle check` that only --cost reads."""
    check.add_argument("--cost", action="store_true",
                       help="print every release the program makes (where, mechanism, sensitivity, budget, "
                            "error at 95%%) and its total, from a dry run on public stand-ins of its tables")
    check.add_argument("--budget", type=float, metavar="E", help="with --cost: the total the run will have")
    check.add_argument("--delta", type=float, metavar="D", help="with --cost: the total delta")
    check.add_argument("--accounting", choices=("pure", "approximate", "zcdp"), help="with --cost: the accounting")
    check.add_argument("--rho", type=float, metavar="R", help="with --cost: a zCDP total in rho")


def cost_command(args: argparse.Namespace, program: Any, declared: dict[str, Any], pending: dict[str, tuple]) -> int:
    """Print the cost report of `program` (parsed and checked) and return 0.

    Args:
        declared: Table name -> its schema file's declaration (jostle.data.schema_files.SchemaFile).
        pending: Table name -> a pending binding (the program declares its schema).
    """
    from jostle.data.stand_in import stand_in_frame
    from jostle.diagnostics.errors import UsageError
    from jostle.language.cost_report import cost_report
    from jostle.privacy.units import parse_unit
    from jostle.session import Session

    session = Session(budget=args.budget, delta=args.delta or 0.0, accounting=args.accounting, rho=args.rho,
                      ledger_path=":memory:")  # touches no data, no ledger
    for name, declaration in declared.items():
        try:
            unit = parse_unit(declaration.privacy_unit) if declaration.privacy_unit is not None else None
        except ValueError as error:
            raise UsageError(f"the privacy unit of '{name}': {error}") from None
        key = unit.key if unit is not None and unit.is_entity else None
        # A stand-in bound in place of the table: made from its schema file alone.
        session.bind_private(name, stand_in_frame(declaration.schema, key), declaration.schema,
                             declaration.public_rows, unit=unit)
    session.interpreter.bindings.update(pending)
    report = cost_report(session, program)
    print(f"{Path(args.file)}: the cost of every release, from a dry run on public stand-ins (no data read)\n")
    print(report.render())
    return 0
