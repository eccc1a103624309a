"""The partition tree of a session's data and the composed cost of its charges.

Tables derived by where/select/derive/bin share their parent's node (their rows are a subset of
it); only `partition` makes new nodes, one per public key, grouped in a `ParallelGroup` whose
cost is the maximum over its parts (parallel composition, McSherry 2009, Theorem 4); charges at
one node add up (sequential composition). Each root carries the privacy unit of the tables
below it (jostle.privacy.units). The algebra is the measure's (jostle.privacy.measures): the
same tree composes (epsilon, delta) budgets and rhos. `cost` is the reference definition;
`CostTree` keeps the same quantity incrementally. The accountant (jostle.privacy.budget) uses
both.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from jostle.diagnostics.errors import PrivacyError
from jostle.diagnostics.source import Span
from jostle.privacy.measures import AnyBudget, Budget, RhoZCDPBudget, zero_like
from jostle.privacy.units import ROW, PrivacyUnit


# ---------------------------------------------------------------- the data tree
@dataclass(eq=False)
class DataNode:
    """A node of the partition tree: the whole data, or one part of a `partition`.

    Tables derived by where/select/derive/bin share their parent's node (their rows are a
    subset of it); only `partition` makes new nodes, one per public key, grouped in a
    `ParallelGroup` whose cost is the maximum over its parts.
    """

    label: str
    parent: DataNode | None = None
    group: ParallelGroup | None = None
    # A root's privacy unit (jostle.privacy.units): the data below it is private for that unit.
    unit: PrivacyUnit = ROW

    @property
    def root(self) -> DataNode:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    @property
    def privacy_unit(self) -> PrivacyUnit:
        """The unit of the data this node holds (its root's)."""
        return self.root.unit

    def path(self) -> list[DataNode]:
        node, chain = self, []
        while node is not None:
            chain.append(node)
            node = node.parent
        return chain[::-1]


@dataclass(eq=False)
class ParallelGroup:
    """The parts of one partition of `parent`: they compose in parallel."""

    parent: DataNode
    column: str
    parts: list[DataNode] = field(default_factory=list)

    def part(self, key: object) -> DataNode:
        prefix = "" if self.parent.parent is None else self.parent.label + ", "
        node = DataNode(f"{prefix}{self.column}={key}", self.parent, self, self.parent.unit)
        self.parts.append(node)
        return node


def common_node(nodes: list[DataNode]) -> DataNode:
    """The deepest node that is an ancestor (or equal) of all `nodes`.

    A value computed from several parts is charged there: charging an ancestor counts the
    charge in every part below it, which over-approximates and so is always sound.
    """
    paths = [n.path() for n in nodes]
    if len({id(path[0]) for path in paths}) > 1:
        units = sorted({str(path[0].unit) for path in paths})
        raise PrivacyError(
            "a value computed from tables under different privacy units (" + ", ".join(units) + ")",
            None, "release each table's values separately: one release cannot be private for two "
            "different units at once")
    common = paths[0][0]
    for level in zip(*paths):
        if all(n is level[0] for n in level):
            common = level[0]
        else:
            break
    return common


# ---------------------------------------------------------------- ledger
@dataclass(frozen=True)
class Charge:
    """One entry of the ledger: a release and what it cost."""

    index: int
    budget: AnyBudget
    mechanism: str
    description: str
    span: Span | None
    node: DataNode = field(repr=False, compare=False)
    # Where the release was written, when that is library code entered from `span` (the
    # user's call, e.g. of stats.private_mean); None when the release is written at `span`.
    library_span: Span | None = field(default=None, repr=False, compare=False)
    # What the release costs in the session's accounting (`budget` converted, e.g. a pure
    # epsilon as epsilon^2/2 in a zCDP session); equal to `budget` when no conversion applies.
    cost: AnyBudget | None = field(default=None, compare=False)
    # Public facts about the release that the code making it adds right after the charge, for
    # the cost report and `accuracy` (issue 29): "law" (its noise law, a
    # jostle.privacy.error_bounds.NoiseLaw, from the calibration: public inputs only) or
    # "estimate" (a learner's or ChoiceMaker's predicted error, from public training data).
    # Never anything read from private rows; not part of the durable ledger.
    details: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def unit(self) -> PrivacyUnit:
        """The privacy unit the release is private for (its data's)."""
        return self.node.privacy_unit

    @property
    def charged(self) -> AnyBudget:
        """What the release cost in the session's accounting."""
        return self.budget if self.cost is None else self.cost

    @property
    def line(self) -> int | None:
        return self.span.line if self.span is not None else None

    def as_dict(self) -> dict:
        amounts: dict = {}
        if isinstance(self.budget, Budget):
            amounts = {"epsilon": float(self.budget.epsilon), "delta": float(self.budget.delta)}
        if isinstance(self.charged, RhoZCDPBudget):
            amounts["rho"] = float(self.charged.rho)
        return {
            "index": self.index,
            "mechanism": self.mechanism,
            **amounts,
            "unit": str(self.unit),
            "what": self.description,
            "data": self.node.label,
            "where": self.span.location if self.span is not None else "",
        }


def cost(charges: list[Charge]) -> Budget:
    """What a set of charges costs under sequential and parallel composition.

    The reference definition, recomputed from scratch; the accountant keeps the same quantity
    incrementally in a `CostTree` (the tests check that the two agree).
    """
    if not charges:
        return Budget.zero()
    zero = zero_like(charges[0].charged)
    own: dict[DataNode, AnyBudget] = defaultdict(lambda: zero)
    children: dict[DataNode, dict[ParallelGroup, set[DataNode]]] = defaultdict(lambda: defaultdict(set))
    root = None
    for c in charges:
        own[c.node] = own[c.node] + c.charged
        node = c.node
        while node.parent is not None:
            assert node.group is not None
            children[node.parent][node.group].add(node)
            node = node.parent
        root = node

    def node_cost(node: DataNode) -> AnyBudget:
        total = own.get(node, zero)
        for parts in children.get(node, {}).values():
            widest = zero
            for part in parts:
                widest = widest.join(node_cost(part))
            total = total + widest
        return total

    assert root is not None
    return node_cost(root)


class CostTree:
    """The composed cost of a growing set of charges, updated in O(depth) per charge.

    For every node it keeps the running cost of its subtree (its own charges, plus, for each
    partition of it, the most any one part costs) and for every parallel group the running
    maximum over its parts. Costs only grow, so adding `b` at a node raises that node's cost
    by `b`, its group's maximum by max(0, new part cost - old maximum) componentwise, and so
    on up to the root: exactly the change `cost()` would compute from scratch.
    """

    def __init__(self, zero: AnyBudget | None = None) -> None:
        self.zero: AnyBudget = Budget.zero() if zero is None else zero
        self._node_cost: dict[DataNode, AnyBudget] = {}
        self._group_max: dict[ParallelGroup, AnyBudget] = {}
        self.total: AnyBudget = self.zero

    def _walk(self, budget: AnyBudget, node: DataNode, apply: bool) -> AnyBudget:
        zero = self.zero
        rise = budget
        while True:
            if apply:
                self._node_cost[node] = self._node_cost.get(node, zero) + rise
            if node.parent is None:
                break
            group = node.group
            assert group is not None
            widest = self._group_max.get(group, zero)
            part = self._node_cost.get(node, zero) + (zero if apply else rise)
            wider = widest.join(part)
            rise = wider - widest
            if apply:
                self._group_max[group] = wider
            if rise.is_zero():
                return rise
            node = node.parent
        # Separate roots (none today) would be separate data: their costs simply add.
        if apply:
            self.total = self.total + rise
        return rise

    def rise(self, budget: AnyBudget, node: DataNode) -> AnyBudget:
        """How much charging `budget` at `node` would add to the total (nothing is changed)."""
        return self._walk(budget, node, apply=False)

    def add(self, budget: AnyBudget, node: DataNode) -> AnyBudget:
        """Charge `budget` at `node`; returns the rise of the total."""
        return self._walk(budget, node, apply=True)
