"""How a release is described in the ledger's `what` column: as the program wrote it.

`count(old)` where the program wrote `old = adult.where(lambda r: r.income == ">50K")` is logged
as `count(old: adult.where(r.income == ">50K"))`, not `count(adult.csv)`: the variable the
program assigned the table to, the variable its root was assigned to (else the name it was
bound or loaded under), and the where/derive/select/bin steps of its plan, each shortened.

Everything here is program text (the source of a row function, a variable's name, a column's
name) or public metadata (a bound table's name, a partition's public key), so a description is
the same on neighbouring inputs: it never reads a row, a count or any other private value.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from jostle.language.values import BoundMethod, Builtin, Closure, Table

# The longest a step's argument is written in full; longer ones are cut at a word with "...".
STEP_WIDTH = 40
# The longest a whole plan is written in full; longer ones keep the root and the last steps.
PLAN_WIDTH = 100


def _shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: width - 3]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip() + "..."


def function_text(function: Any) -> str:
    """A row function as the program wrote it: a lambda's body (`r.age > 50`), a def's name."""
    if isinstance(function, Closure):
        if function.name == "lambda" and not isinstance(function.body, tuple):
            span = getattr(function.body, "span", None)
            text = span.text() if span is not None else ""
            if text and (span.end_line == span.line):
                return _shorten(text, STEP_WIDTH)
            return "lambda ..."
        return function.name
    if isinstance(function, Builtin):
        return function.name
    if isinstance(function, BoundMethod):
        return function.builtin.name
    return "..."


def plan_text(table: Table) -> str:
    """The table's plan from its root: `adult.where(r.age > 50)`, or its name alone."""
    return table.written or table.name


def with_step(result: Any, source: Any, step: str) -> Any:
    """`result`, a table computed from `source` by one step, described as `source's plan.step`.

    Set from the source (not appended to the result's own description), so a step that runs
    twice internally (an engine's in-memory fallback) is written once.
    """
    if not isinstance(result, Table) or not isinstance(source, Table):
        return result
    return dataclasses.replace(result, written=f"{plan_text(source)}.{step}", alias="")


def part_text(table: Table, label: str) -> str:
    """A partition's part: `adult[sex=F]` (its public key)."""
    return f"{plan_text(table)}[{label}]"


def assigned(value: Any, name: str) -> Any:
    """`value` as assigned to the variable `name`: a table remembers the name (`hr = load(...)`
    makes the root `hr`; `old = hr.where(...)` keeps its plan and is called `old`)."""
    if not isinstance(value, Table) or value.alias == name:
        return value
    if not value.written:
        return dataclasses.replace(value, written=name, alias=name)
    return dataclasses.replace(value, alias=name)


def table_text(table: Table) -> str:
    """A table in a release's description: `old: adult.where(r.age > 50)`, `adult`, ..."""
    plan = plan_text(table)
    if len(plan) > PLAN_WIDTH:
        root = re.split(r"[.\[]", plan, maxsplit=1)[0]
        plan = root + "..." + plan[len(plan) - (PLAN_WIDTH - len(root) - 3):]
    if table.alias and table.alias != plan:
        return f"{table.alias}: {plan}"
    return plan


def quoted(names: Any) -> str:
    """Column names as a step writes them: "a", "b"."""
    if isinstance(names, str):
        return f'"{names}"'
    try:
        return ", ".join(f'"{name}"' for name in names)
    except TypeError:
        return "..."


__all__ = ["function_text", "plan_text", "with_step", "part_text", "assigned", "table_text", "quoted"]
