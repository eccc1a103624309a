"""The cost report: every release a program makes, what it costs and how wrong it will be,
before anything is spent (`jostle check FILE --cost`, `Session.check(source)`).

The rows come from the dry run (jostle.language.dry_run: the program run once on public
stand-ins of its private tables, with a throw-away accountant): one row per release it made,
with where it is written (file:line:col; for a release written in the standard library, the
user's call and the library's line), its mechanism, its sensitivity with its norm and privacy
unit (from the noise law the mechanism attached, `Charge.details["law"]`), its budget in its
measure (pure epsilon, (epsilon, delta) or rho), its error at 95% (the law's closed-form
half-width; for learners and ChoiceMakers the predicted error `details["estimate"]`, labelled an
estimate) and whether the release is statically determined. A fact the release did not attach
shows as "—".

Whether a release is determined is decided from the program text alone (`Dependence`), never
from data: a release is "depends on NAME (line N)" when it sits inside an `if`/`while`/`for`
(or `x if c else y`, or the right of `and`/`or`) whose condition or iterable depends on a
released value, or inside a function called from such a place or with such an argument. A
name depends on a release when it is assigned (or a loop target bound) from an expression that
contains a release (`{{ }}`, a release built-in, a learner Option, a ChoiceMaker, `trace`/
`explain`, a call the dry run saw charge, a function that releases or returns such a value) or
a name that depends on one; this is tracked through assignments, calls (arguments) and returns,
by name and conservatively (one name in two scopes is one name). Loops over public ranges,
partitions over public keys and functions called with public arguments are determined: on
those paths the real run makes the same releases at the same budgets as the dry run.

A gradual release of an accuracy-first block (jostle.language.accuracy_first: `details["gradual"]`)
spends what the data need, so it is never determined.

The total: when every release (and every release the text could make on a path the dry run did
not take) is determined, it is the dry run's composed total (the accountant's sequential and
parallel composition), which the real run's ledger then equals; otherwise it is an upper bound,
the cap the program runs under (its `budget` statement or the session's total), and the report
says what it depends on and where.

Privacy: the report is a function of the program and the dry run, which is a function of the
program and public facts only (see jostle.language.dry_run).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from jostle.language import ast_nodes as A
from jostle.privacy.budget import AnyBudget, Charge

if TYPE_CHECKING:
    import pandas as pd

    from jostle.language.dry_run import DryRun

MISSING = "—"
CONFIDENCE = 0.95
DETERMINED = "yes"
# Built-ins whose result depends on a ChoiceMaker's released choice or a learner's released model,
# or on the ledger: what was spent and what is left (the durable ledger's balances included, which
# the dry run does not see) are facts of this run that a program may branch on.
_RELEASED_FACTS = ("trace", "explain", "predicted_error", "spent", "remaining", "ledger")


def _inside(inner: Any, outer: Any) -> bool:
    """Whether span `inner` lies within span `outer` (same source)."""
    if inner is None or outer is None or inner.source.name != outer.source.name:
        return False
    return (outer.line, outer.column) <= (inner.line, inner.column) and \
        (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)


def _children(node: Any) -> list[Any]:
    if isinstance(node, list):
        return [item for part in node for item in _children(part)]
    if isinstance(node, tuple):
        return [item for part in node for item in _children(part)] if node and not isinstance(node[0], str) \
            else [item for part in node[1:] for item in _children(part)] if node else []
    if isinstance(node, A.Node):
        return [node]
    return []


def _subnodes(node: A.Node) -> list[A.Node]:
    out: list[A.Node] = []
    for f in fields(node):
        if f.name != "span":
            out.extend(_children(getattr(node, f.name)))
    return out


def _walk(node: Any):
    stack = list(_children(node))
    while stack:
        item = stack.pop()
        yield item
        stack.extend(_subnodes(item))


class Dependence:
    """Which releases of a program depend on released values (the module docstring)."""

    def __init__(self, program: A.Program, charge_spans: list[Any], builtins: dict[str, Any],
                 facts: tuple[str, ...] = _RELEASED_FACTS) -> None:
        self.program = program
        self.facts = facts  # built-ins whose results count as released values
        self.charge_spans = [s for s in charge_spans if s is not None]
        self.releasing_builtins = _releasing_builtins(builtins)
        self.defs: dict[str, A.Def] = {}
        self.makers: set[str] = set()
        # every node with its enclosing controls: (test expression, enclosing def name or None)
        self.contexts: dict[int, tuple[tuple[A.Expr, ...], str | None]] = {}
        self._collect(program.body, (), None)
        self.tainted: dict[str, str] = {}
        self.releasing_defs: set[str] = set()
        self._fixpoint()

    # ------------------------------------------------------------ structure
    def _collect(self, node: Any, tests: tuple[A.Expr, ...], owner: str | None) -> None:
        for item in _children(node):
            self.contexts[id(item)] = (tests, owner)
            if isinstance(item, A.Def):
                self.defs[item.name] = item
                self._collect(item.params, tests, owner)
                self._collect(item.body, (), item.name)
            elif isinstance(item, A.Assign) and isinstance(item.value, A.ChoiceMakerExpr):
                self.makers.add(item.name)
                self._collect(item.value, tests, owner)
            elif isinstance(item, A.If):
                seen: tuple[A.Expr, ...] = ()
                for test, body in item.branches:
                    self._collect(test, tests + seen, owner)
                    seen += (test,)
                    self._collect(body, tests + seen, owner)
                self._collect(item.orelse, tests + seen, owner)
            elif isinstance(item, A.While):
                self._collect(item.test, tests, owner)
                self._collect(item.body, tests + (item.test,), owner)
            elif isinstance(item, A.For):
                self._collect(item.iterable, tests, owner)
                self._collect(item.body, tests + (item.iterable,), owner)
            elif isinstance(item, A.IfExpr):
                self._collect(item.test, tests, owner)
                self._collect((item.then, item.orelse), tests + (item.test,), owner)
            elif isinstance(item, A.BoolOp):
                self._collect(item.left, tests, owner)
                self._collect(item.right, tests + (item.left,), owner)
            else:
                self._collect(_subnodes(item), tests, owner)
        if isinstance(node, A.Node) and id(node) not in self.contexts:
            self.contexts[id(node)] = (tests, owner)

    def _calls_to(self, name: str) -> list[A.Node]:
        """Every place the function `name` is used (a call, or passed on as a value)."""
        return [n for n in _walk(self.program.body) if isinstance(n, A.Name) and n.id == name]

    # ------------------------------------------------------------ taint
    def _releases(self, expr: A.Node) -> bool:
        """Whether evaluating `expr` itself may release (not counting names that depend on one)."""
        for node in [expr, *_walk(expr)]:
            if isinstance(node, A.Release):
                return True
            if isinstance(node, A.Call):
                func = node.func
                if isinstance(func, A.Name) and (func.id in self.releasing_builtins or func.id in self.makers
                                                 or func.id in self.releasing_defs or func.id in self.facts):
                    return True
                if any(_inside(span, node.span) for span in self.charge_spans):
                    return True
        return False

    def taint(self, expr: A.Node | None) -> str | None:
        """What `expr`'s value depends on among released values ("n (line 4)"), or None."""
        if expr is None:
            return None
        if self._releases(expr):
            return f"the release at line {expr.span.line}"
        for node in [expr, *_walk(expr)]:
            if isinstance(node, A.Name) and node.id in self.tainted:
                return self.tainted[node.id]
        return None

    def _mark(self, name: str, origin: str | None) -> bool:
        if origin is None or name in self.tainted:
            return False
        self.tainted[name] = origin
        return True

    def _fixpoint(self) -> None:
        nodes = list(_walk(self.program.body))
        changed = True
        while changed:
            changed = False
            for name, definition in self.defs.items():
                if name not in self.releasing_defs and any(
                        self._releases(stmt) for stmt in definition.body):
                    self.releasing_defs.add(name)
                    changed = True
                returns = [n for n in _walk(definition.body) if isinstance(n, A.Return)]
                if name not in self.releasing_defs and any(self.taint(r.value) for r in returns):
                    self.releasing_defs.add(name)
                    changed = True
            for node in nodes:
                if isinstance(node, (A.Assign, A.AugAssign)):
                    origin = self.taint(node.value)
                    changed |= self._mark(node.name, origin and (node.name + f" (line {node.span.line})"))
                elif isinstance(node, A.For):
                    origin = self.taint(node.iterable)
                    for target in node.targets:
                        changed |= self._mark(target, origin and f"{target} (line {node.span.line})")
                elif isinstance(node, A.Call) and isinstance(node.func, A.Name) and node.func.id in self.defs:
                    params = self.defs[node.func.id].params
                    for param, arg in zip(params, node.args):
                        changed |= self._mark(param.name, self.taint(arg))
                    by_name = {p.name: p for p in params}
                    for keyword in node.kwargs:
                        if keyword.name in by_name:
                            changed |= self._mark(keyword.name, self.taint(keyword.value))

    # ------------------------------------------------------------ answers
    def depends(self, node: A.Node, seen: frozenset[str] = frozenset()) -> str | None:
        """What the place of `node` depends on among released values, or None if determined."""
        tests, owner = self.contexts.get(id(node), ((), None))
        if isinstance(node, A.Call):  # a release's own arguments (its budget, its columns)
            tests = (*tests, *node.args, *(keyword.value for keyword in node.kwargs))
        for test in tests:
            origin = self.taint(test)
            if origin is not None:
                return origin
        if owner is None or owner in seen:
            return None
        for use in self._calls_to(owner):
            origin = self.depends(use, seen | {owner})
            if origin is not None:
                return origin
        return None

    def node_at(self, span: Any) -> A.Node | None:
        """The innermost node of the program whose span holds `span`."""
        best = None
        for node in _walk(self.program.body):
            if _inside(span, node.span) and (best is None or _inside(node.span, best.span)):
                best = node
        return best

    def undetermined_sites(self) -> list[tuple[A.Node, str]]:
        """Places the text could release under a condition depending on a released value
        (including paths the dry run did not take)."""
        sites = []
        for node in _walk(self.program.body):
            if isinstance(node, (A.Release, A.Call)) and (isinstance(node, A.Release) or self._may_release(node)):
                origin = self.depends(node)
                if origin is not None:
                    sites.append((node, origin))
        return sites

    def _may_release(self, call: A.Call) -> bool:
        func = call.func
        if isinstance(func, A.Name):
            return (func.id in self.releasing_builtins or func.id in self.makers or func.id in self.releasing_defs
                    or func.id not in self._builtin_names)
        return True  # a method or a module's function: conservatively, it may release

    @property
    def _builtin_names(self) -> set[str]:
        from jostle.language.builtins import REGISTRY

        return set(REGISTRY)


def _releasing_builtins(builtins: dict[str, Any]) -> set[str]:
    """The built-ins whose call may release: the release built-ins and the learners' Options
    (values of their own kind); the plain "choice" built-ins (corpora, tasks, query sets) release
    nothing, and `trace`/`explain` read releases (`_RELEASED_FACTS`)."""
    from jostle.language.values import Builtin

    return {name for name, b in builtins.items() if getattr(b, "privacy", None) == "release"
            or (getattr(b, "privacy", None) == "choice" and not isinstance(b, Builtin))}


# ---------------------------------------------------------------- the report
@dataclass(frozen=True)
class CostRow:
    """One release of the dry run (see the module docstring)."""

    where: str
    called_from: str
    data: str
    mechanism: str
    sensitivity: str
    unit: str
    budget: str
    error: str
    error_kind: str
    determined: str


@dataclass
class CostReport:
    """The cost report of one program: its rows and its total.

    Attributes:
        rows: One per release the dry run made, in order.
        total: The dry run's composed total when `determined`, else an upper bound (the cap the
            program runs under), or None when there is no bound.
        determined: Whether every release the program can make is statically determined.
        depends: What the total depends on ("n (line 4)") when it is not determined.
        seconds: The dry run's time.
    """

    rows: list[CostRow]
    total: AnyBudget | None
    determined: bool
    depends: str | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def total_text(self) -> str:
        if self.determined:
            return f"{self.total if self.total is not None else 'nothing'} (determined)"
        bound = f"at most {self.total}" if self.total is not None else "no bound (no total is set)"
        return f"{bound}: depends on {self.depends}"

    def to_frame(self) -> pd.DataFrame:
        """The rows as a DataFrame; the total in `.attrs`: "total" (the budget), "determined",
        "depends" and "total_text"."""
        import pandas as pd

        columns = [f.name for f in fields(CostRow)]
        frame = pd.DataFrame([[getattr(row, c) for c in columns] for row in self.rows], columns=columns)
        frame.attrs.update(total=self.total, determined=self.determined, depends=self.depends,
                           total_text=self.total_text())
        return frame

    def render(self) -> str:
        """A readable table, then the total."""
        header = ("where", "data", "mechanism", "sensitivity", "budget", "error at 95%", "determined")
        lines = [header]
        for row in self.rows:
            where = row.where + (f" ({row.called_from})" if row.called_from else "")
            sensitivity = row.sensitivity if row.sensitivity == MISSING else f"{row.sensitivity}, {row.unit}"
            error = row.error if row.error_kind in ("", "closed form") else f"{row.error} ({row.error_kind})"
            lines.append((where, row.data, row.mechanism, sensitivity, row.budget, error, row.determined))
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in lines]
        text.insert(1, "  ".join("-" * width for width in widths))
        if not self.rows:
            text.append("(no releases)")
        text.append("")
        text.append(f"total: {self.total_text()}")
        text.extend(self.notes)
        return "\n".join(text)


def _gradual(charge: Charge) -> bool:
    """Whether a charge is a step of an accuracy-first gradual release (it spends what the data need)."""
    return "gradual" in charge.details or charge.mechanism.startswith("gradual")


def _budget_text(budget: AnyBudget) -> str:
    """A budget as people read it: exact when short (epsilon=0.1, rho=1/30), else ~ 6 digits."""
    from jostle.privacy.budget import fmt_exact

    parts = []
    for quantity, amount in budget.quantities():
        if quantity == "delta" and not amount:
            continue
        exact_text = fmt_exact(amount)
        parts.append(f"{quantity}={exact_text if len(exact_text) <= 10 else f'~{float(amount):.6g}'}")
    return ", ".join(parts)


def _short(span: Any) -> str:
    from pathlib import Path

    if span is None:
        return ""
    return f"{Path(span.source.name).name}:{span.line}:{span.column}"


def _sensitivity(law: Any) -> str:
    if law is None or getattr(law, "sensitivity", None) is None:
        return MISSING
    return f"{law.sensitivity:g} ({getattr(law, 'norm', 'l1').upper()})"


def _estimate_text(estimate: Any) -> str:
    interval = f" [{estimate.low:.3g}, {estimate.high:.3g}]" if estimate.has_interval else ""
    return f"{estimate.value:.3g}{interval} ({estimate.measure_name or estimate.measure})"


def _direct_estimate(charge: Charge) -> Any:
    """A learner or algorithm called directly (a charge "option NAME" that no dispatch annotated):
    its expected error at the charged budget from the shipped experience that tried it
    (`jostle.choicemaker.shipped_estimates`; public training data only), or None."""
    if not charge.mechanism.startswith("option ") or charge.details.get("estimate") is not None:
        return None
    from jostle.choicemaker.shipped_estimates import option_estimate

    try:
        return option_estimate(charge.mechanism.removeprefix("option "), charge.budget,
                               charge.details.get("segment"), None, CONFIDENCE)
    except Exception:  # noqa: BLE001 - an estimate that cannot be made is shown as missing, never wrong
        return None


def _error(charge: Charge) -> tuple[str, str]:
    estimate = charge.details.get("estimate")
    if estimate is not None:
        # the dispatch ran on the stand-in: its metafeatures, hence the prediction, are the stand-in's
        return _estimate_text(estimate), "estimate (predicted on the stand-in)"
    direct = _direct_estimate(charge)
    if direct is not None:  # the corpus's runs of the Option at that budget: nothing of this input
        return _estimate_text(direct), "estimate (shipped experience at this budget)"
    law = charge.details.get("law")
    if isinstance(law, dict) and {"sum", "count"} <= set(law):  # a mean: noisy sum over noisy count
        try:
            return (f"a mean: sum ± {law['sum'].half_width(CONFIDENCE):.4g}, "
                    f"count ± {law['count'].half_width(CONFIDENCE):.4g}"), ""
        except Exception:  # noqa: BLE001 - never a wrong number
            return MISSING, ""
    if law is not None and hasattr(law, "half_width"):
        try:
            return f"± {law.half_width(CONFIDENCE):.4g}", "closed form"
        except Exception as error:  # noqa: BLE001 - a law that cannot say shows why, never a wrong number
            return f"{MISSING} ({error})", ""
    return MISSING, ""


def build_report(program: A.Program, run: DryRun) -> CostReport:
    """The report of `program` from its dry run `run` (module docstring)."""
    dependence = Dependence(program, [c.span for c in run.charges], run.interpreter.builtins.values)
    name = program.source.name
    rows = []
    undetermined: list[str] = []
    for charge in run.charges:
        span = charge.span
        if span is None or span.source.name != name:
            determined = f"code outside {name}, not analysed"
        else:
            node = dependence.node_at(span)
            origin = dependence.depends(node) if node is not None else None
            if origin is None and _gradual(charge):  # accuracy-first: it stops when its bound is met
                origin = f"the data: a gradual release (line {span.line}) stops when its error bound is met"
            determined = DETERMINED if origin is None else f"depends on {origin}"
        if determined != DETERMINED:
            undetermined.append(determined.removeprefix("depends on "))
        error, kind = _error(charge)
        rows.append(CostRow(_short(span), f"in {_short(charge.library_span)}" if charge.library_span else "",
                            charge.node.label, charge.mechanism, _sensitivity(charge.details.get("law")), str(charge.unit),
                            _budget_text(charge.budget), error, kind, determined))
    places = [span for charge, row in zip(run.charges, rows) if row.determined != DETERMINED
              for span in [charge.span]]
    for node, origin in dependence.undetermined_sites():
        undetermined.append(origin)
        places.append(node.span)
    if not undetermined:
        return CostReport(rows, run.spent if run.charges else None, True, seconds=run.seconds)
    return CostReport(rows, _bound(program, run, places), False, undetermined[0], seconds=run.seconds)


def _bound(program: A.Program, run: DryRun, places: list[Any]) -> AnyBudget | None:
    """An upper bound on what the real run may spend when some releases are not determined: the
    cap the program runs under, lowered, when every undetermined place lies in a top-level `with
    budget E:` block with a literal E, to the dry run's composed cost outside those blocks plus
    their caps (sequential composition; a top-level block runs once)."""
    from jostle.privacy.budget import Budget
    from jostle.privacy.composition import cost

    blocks = [stmt for stmt in program.body if isinstance(stmt, A.WithBudget) and isinstance(stmt.epsilon, A.Number)
              and (stmt.delta is None or isinstance(stmt.delta, A.Number)) and stmt.accounting is None]
    chosen = {id(b): b for span in places for b in blocks if _inside(span, b.span)}
    if run.cap is None or not isinstance(run.cap, Budget) or len(places) != sum(
            any(_inside(span, b.span) for b in blocks) for span in places):
        return run.cap
    outside = [c for c in run.charges if not any(_inside(c.span, b.span) for b in chosen.values())]
    bound = cost(outside) if outside else Budget.zero()
    for block in chosen.values():
        bound = bound + Budget.of(block.epsilon.value, block.delta.value if block.delta is not None else 0)
    return bound.meet(run.cap)


def cost_report(session: Any, program: A.Program) -> CostReport:
    """Dry-run `program` in `session` (jostle.language.dry_run) and report its costs.

    Raises:
        JostleError: The dry run failed (located, with a note that it was a dry run).
    """
    from jostle.language.dry_run import dry_run, skip_reason

    from jostle.language.dry_run import DryRunInconclusive

    reason = skip_reason(session)
    if reason is not None:
        return CostReport([], session.interpreter.accountant.cap, False, f"the session's scope ({reason})")
    try:
        return build_report(program, dry_run(session, program))
    except DryRunInconclusive as inconclusive:  # the real run decides: only the cap bounds it
        return CostReport([], session.interpreter.accountant.cap, False, str(inconclusive),
                          notes=[f"(the dry run stopped: {inconclusive})"])


__all__ = ["CostReport", "CostRow", "Dependence", "build_report", "cost_report", "MISSING"]
