"""Saturation, the clause lattice and its vectorised coverage counts (Aleph, issue 24).

The steps of Aleph's inverse entailment (Zeng et al., section 5.1) that read the data:

    saturate        the bottom clause of a seed example: every body literal the modes allow that
                    is true of the seed, in mode order, kept up to the declared bound k
                    (`Modes.max_bottom`); its full size and whether it was truncated are reported
    legal_clauses   the legal clauses of the bottom clause's lattice, deduplicated, by
                    increasing length (the breadth-first order): subsets of its literals whose
                    variables are linked as the modes require (a test on an existential
                    variable only together with the link literal that introduces it; at most
                    one existential variable per clause, the shapes `theory` evaluates)
    Coverage        which examples each clause covers, for many clauses at once, and their
                    counts P (positives) and N (negatives): the one place the search reads
                    examples, so the DP reductions replace `Coverage.counts` by noisy counts

Clauses are held canonically as `Candidate`s (literal specifications, variables abstracted), so
the same clause read off two cars of the seed is one clause.

Coverage is vectorised. Each distinct literal is a boolean mask over the entities of its input
type (filtered rows scattered with `np.bincount`); a block of clauses times the literals'
failure masks is one matrix product (a clause passes an entity when no literal of it fails);
the link's rows gather the existential entities' pass columns and `np.logical_or.reduceat`
takes the any per example over rows sorted by example. No Python loop runs per example or per
clause (only per block of clauses and per distinct link literal).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

import numpy as np

from jostle.learners.ilp.modes import Mode, Modes
from jostle.learners.ilp.relations import Domain, RelationalDatabase, entity_mask
from jostle.learners.ilp.theory import Atom, Clause, Const, Var

#: Clauses per block of the coverage matrix products (bounds the memory of one block).
BLOCK = 256


@dataclass(frozen=True, order=True)
class Spec:
    """A literal with its variables abstracted: a mode and the constants it binds.

    Attributes:
        mode: The index of the mode in `Modes.body`.
        constants: The constants at the mode's `#` positions, in order.
    """

    mode: int
    constants: tuple[str, ...] = ()


@dataclass(frozen=True)
class BottomLiteral:
    """A literal of a bottom clause: its spec and the variable it tests or introduces.

    Attributes:
        spec: The literal's mode and constants.
        variable: 0 for the head's variable; j >= 1 for the j-th existential variable of the
            bottom clause (the output of a link literal, the input of a test on it).
    """

    spec: Spec
    variable: int


@dataclass(frozen=True)
class BottomClause:
    """The most specific clause of a seed example under the modes, kept up to the bound k.

    Attributes:
        seed: The seed example's id.
        literals: The literals kept, in saturation order.
        full_size: The number of literals true of the seed before truncation at k.
        bound: The declared bound k (`Modes.max_bottom`).
    """

    seed: int
    literals: tuple[BottomLiteral, ...]
    full_size: int
    bound: int

    @property
    def size(self) -> int:
        """The number of literals kept (at most the bound k)."""
        return len(self.literals)

    @property
    def truncated(self) -> bool:
        """Whether saturation stopped at the bound k before every true literal was added."""
        return self.full_size > self.size

    def to_clause(self, modes: Modes) -> Clause:
        """The bottom clause as a Prolog clause (existential variables numbered C1, C2, ...)."""
        body = tuple(_atom(modes, literal.spec, literal.variable) for literal in self.literals)
        return Clause(Atom(modes.target, (Var(modes.variable(modes.head_type)),)), body)


@dataclass(frozen=True, order=True)
class Candidate:
    """A clause of the lattice, canonical: head tests, the link, and tests on its variable.

    Attributes:
        head_tests: Tests on the head's variable, sorted.
        link: The link literal introducing the existential variable, or None.
        tests: Tests on the existential variable, sorted (empty when there is no link).
    """

    head_tests: tuple[Spec, ...] = ()
    link: Spec | None = None
    tests: tuple[Spec, ...] = ()

    @property
    def length(self) -> int:
        """The number of body literals."""
        return len(self.head_tests) + (self.link is not None) + len(self.tests)

    def to_clause(self, modes: Modes) -> Clause:
        """The clause in Prolog form (`theory.Clause`)."""
        body = [_atom(modes, spec, 0) for spec in self.head_tests]
        if self.link is not None:
            body.append(_atom(modes, self.link, 1, numbered=False))
            body.extend(_atom(modes, spec, 1, numbered=False) for spec in self.tests)
        return Clause(Atom(modes.target, (Var(modes.variable(modes.head_type)),)), tuple(body))


def _atom(modes: Modes, spec: Spec, variable: int, numbered: bool = True) -> Atom:
    """The atom of a literal spec on a variable (0 the head's, j the j-th existential one)."""
    mode = modes.body[spec.mode]
    constants = iter(spec.constants)
    suffix = str(variable) if numbered else ""
    args: list[Var | Const] = []
    for marker, type_name in zip(mode.markers, mode.types):
        if marker == "#":
            args.append(Const(next(constants)))
        elif marker == "-" or type_name != modes.head_type:
            args.append(Var(modes.variable(type_name) + suffix))
        else:
            args.append(Var(modes.variable(type_name)))
    return Atom(mode.predicate, tuple(args))


def _mode_rows(database: RelationalDatabase,
               mode: Mode) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """The rows of a mode's relation that are facts of its predicate, and its argument columns."""
    predicate = database.predicates[mode.predicate]
    relation = database.relations[predicate.relation]
    columns = {i: relation.columns[column] for i, column in enumerate(predicate.args)}
    return predicate.rows(relation), columns


def _decode(database: RelationalDatabase, mode: Mode, position: int, code: int) -> str:
    """The constant of a coded `#` argument."""
    predicate = database.predicates[mode.predicate]
    domain = database.arg_type(predicate, position)
    assert isinstance(domain, Domain)
    return domain.values[int(code)]


def _true_literals(database: RelationalDatabase, modes: Modes, index: int,
                   entity: int) -> list[tuple[Spec, int | None]]:
    """The literals of mode `index` true with its input bound to `entity`: (spec, output id)."""
    mode = modes.body[index]
    rows, columns = _mode_rows(database, mode)
    rows = rows & (columns[mode.input] == entity)
    found: dict[tuple[Spec, int | None], None] = {}
    out = mode.output
    for row in np.flatnonzero(rows):
        constants = tuple(_decode(database, mode, p, columns[p][row]) for p in mode.constants)
        found[(Spec(index, constants), None if out is None else int(columns[out][row]))] = None
    return list(found)


def saturate(database: RelationalDatabase, modes: Modes, seed: int) -> BottomClause:
    """The bottom clause of a seed example: every literal the modes allow that is true of it.

    Literals are added in this order: tests on the head variable (in mode order), then for each
    link literal (in mode order, its outputs in id order) the link and the tests on its new
    variable; saturation keeps the first `modes.max_bottom` (k) literals and reports the full
    size. The loops here run per literal of one seed, never per example of the database.

    Args:
        database: The examples and their facts.
        modes: The language bias (checked against the database).
        seed: The seed example's id.
    """
    modes.check(database)
    literals: list[BottomLiteral] = []
    links: list[tuple[Spec, int, str]] = []
    for index, mode in enumerate(modes.body):
        if mode.types[mode.input] != modes.head_type:
            continue
        for spec, output in _true_literals(database, modes, index, seed):
            if output is None:
                literals.append(BottomLiteral(spec, 0))
            else:
                links.append((spec, output, mode.types[mode.output]))
    variables: dict[tuple[str, int], int] = {}
    for spec, output, type_name in links:
        key = (type_name, output)
        new = key not in variables
        if new:
            variables[key] = len(variables) + 1
        literals.append(BottomLiteral(spec, variables[key]))
        if not new:
            continue
        for index, mode in enumerate(modes.body):
            if mode.output is None and mode.types[mode.input] == type_name:
                literals.extend(BottomLiteral(test, variables[key])
                                for test, _ in _true_literals(database, modes, index, output))
    kept = tuple(literals[:modes.max_bottom])
    return BottomClause(seed, kept, len(literals), modes.max_bottom)


def legal_clauses(bottom: BottomClause, modes: Modes,
                  max_length: int | None = None) -> list[Candidate]:
    """The legal clauses of a bottom clause's lattice, deduplicated, by increasing length.

    A subset of the bottom clause's literals is legal when each test on an existential variable
    comes with the link literal that introduces that variable, and at most one existential
    variable occurs (one link). The empty clause (length 0, covering every example) is first.

    Args:
        bottom: The bottom clause.
        modes: The modes it was saturated under.
        max_length: The most body literals (default `modes.max_clause_length`).
    """
    limit = modes.max_clause_length if max_length is None else max_length
    head = sorted({lit.spec for lit in bottom.literals if lit.variable == 0
                   and modes.body[lit.spec.mode].output is None})
    links: dict[int, set[Spec]] = {}
    tests: dict[int, set[Spec]] = {}
    for lit in bottom.literals:
        if lit.variable == 0:
            continue
        if modes.body[lit.spec.mode].output is not None:
            links.setdefault(lit.variable, set()).add(lit.spec)
        else:
            tests.setdefault(lit.variable, set()).add(lit.spec)
    found: dict[Candidate, None] = {}
    for size in range(min(len(head), limit) + 1):
        for head_tests in combinations(head, size):
            found[Candidate(head_tests)] = None
            for variable, link_specs in links.items():
                own = sorted(tests.get(variable, ()))
                for link in sorted(link_specs):
                    for count in range(min(len(own), limit - size - 1) + 1):
                        for chosen in combinations(own, count):
                            found[Candidate(head_tests, link, chosen)] = None
    return sorted(found, key=lambda candidate: candidate.length)


#: The most clauses a lattice may have before it is enumerated: a public cap on work and memory
#: (about 10 s of coverage per 10,000 examples at the cap), checked before anything is charged.
MAX_LATTICE = 250_000


def count_legal_clauses(bottom: BottomClause, modes: Modes, max_length: int | None = None) -> int:
    """How many clauses `legal_clauses` would enumerate, counted without enumerating them.

    An upper bound, exact when no two existential variables share a link literal (always for
    fake bottom clauses): for s head tests out of h, the clause without a link plus, for each
    variable v and each of its link literals, every choice of at most (limit - s - 1) of its t_v
    tests. Public: it reads the bottom clause and the modes only.
    """
    from math import comb
    limit = modes.max_clause_length if max_length is None else max_length
    head = {lit.spec for lit in bottom.literals if lit.variable == 0
            and modes.body[lit.spec.mode].output is None}
    links: dict[int, set[Spec]] = {}
    tests: dict[int, set[Spec]] = {}
    for lit in bottom.literals:
        if lit.variable:
            kind = links if modes.body[lit.spec.mode].output is not None else tests
            kind.setdefault(lit.variable, set()).add(lit.spec)
    total = 0
    for size in range(min(len(head), limit) + 1):
        linked = sum(len(specs) * sum(comb(len(tests.get(v, ())), c)
                                      for c in range(min(len(tests.get(v, ())), limit - size - 1) + 1))
                     for v, specs in links.items())
        total += comb(len(head), size) * (1 + linked)
    return total


def check_lattice(bottom: BottomClause, modes: Modes, max_length: int | None = None) -> int:
    """The lattice's size, refused (ValueError, before any charge) above `MAX_LATTICE`."""
    size = count_legal_clauses(bottom, modes, max_length)
    if size > MAX_LATTICE:
        limit = modes.max_clause_length if max_length is None else max_length
        raise ValueError(f"the fake bottom clause of {bottom.size} literals spans {size:,} legal "
                         f"clauses of at most {limit} literals, more than the {MAX_LATTICE:,} "
                         f"Jostle enumerates; declare a smaller k or a shorter maximum clause "
                         f"length (each clause is one more count to noise)")
    return size


class Coverage:
    """Vectorised coverage of many clauses over one database's examples.

    Literal masks are computed once per distinct literal and cached; `matrix` gives the
    clauses x examples coverage, `counts` the P and N vectors the search scores.
    """

    def __init__(self, database: RelationalDatabase, modes: Modes) -> None:
        """Prepare coverage over a database under checked modes."""
        modes.check(database)
        self.database = database
        self.modes = modes
        self.n_heads = database.count(database.examples.entity)
        self._masks: dict[Spec, np.ndarray] = {}
        self._links: dict[Spec, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _constants(self, spec: Spec) -> dict[int, str]:
        mode = self.modes.body[spec.mode]
        return dict(zip(mode.constants, spec.constants))

    def literal_mask(self, spec: Spec) -> np.ndarray:
        """The entities of a test literal's input type for which the literal is true."""
        if spec not in self._masks:
            mode = self.modes.body[spec.mode]
            predicate = self.database.predicates[mode.predicate]
            relation = self.database.relations[predicate.relation]
            rows = predicate.rows(relation, self._constants(spec))
            column = relation.columns[predicate.args[mode.input]]
            count = self.database.counts[mode.types[mode.input]]
            self._masks[spec] = entity_mask(column[rows], int(count))
        return self._masks[spec]

    def _link(self, spec: Spec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A link literal's rows sorted by head: (outputs, start of each head's run, heads)."""
        if spec not in self._links:
            mode = self.modes.body[spec.mode]
            predicate = self.database.predicates[mode.predicate]
            relation = self.database.relations[predicate.relation]
            rows = predicate.rows(relation, self._constants(spec))
            heads = relation.columns[predicate.args[mode.input]][rows]
            outputs = relation.columns[predicate.args[mode.output]][rows]
            order = np.argsort(heads, kind="stable")
            heads, outputs = heads[order], outputs[order]
            unique, starts = np.unique(heads, return_index=True)
            self._links[spec] = (outputs, starts, unique)
        return self._links[spec]

    def _all_pass(self, groups: Sequence[tuple[Spec, ...]], size: int) -> np.ndarray:
        """Per group of tests, the entities passing every test: (groups x entities) booleans."""
        specs = sorted({spec for group in groups for spec in group})
        if not specs:
            return np.ones((len(groups), size), dtype=bool)
        position = {spec: i for i, spec in enumerate(specs)}
        fails = np.stack([~self.literal_mask(spec) for spec in specs]).astype(np.float32)
        incidence = np.zeros((len(groups), len(specs)), dtype=np.float32)
        for row, group in enumerate(groups):
            incidence[row, [position[spec] for spec in group]] = 1.0
        return (incidence @ fails) == 0

    def _block(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """Coverage of a block of clauses over all head entities (clauses x heads)."""
        covered = self._all_pass([c.head_tests for c in candidates], self.n_heads)
        by_link: dict[Spec, list[int]] = {}
        for row, candidate in enumerate(candidates):
            if candidate.link is not None:
                by_link.setdefault(candidate.link, []).append(row)
        for link, rows in by_link.items():
            mode = self.modes.body[link.mode]
            size = int(self.database.counts[mode.types[mode.output]])
            passing = self._all_pass([candidates[row].tests for row in rows], size)
            outputs, starts, heads = self._link(link)
            linked = np.zeros((len(rows), self.n_heads), dtype=bool)
            if len(outputs):
                linked[:, heads] = np.logical_or.reduceat(passing[:, outputs], starts, axis=1)
            covered[rows] &= linked
        return covered

    def matrix(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """Which examples each clause covers: (clauses x examples) booleans, examples in order."""
        ids = self.database.examples.ids
        out = np.zeros((len(candidates), len(ids)), dtype=bool)
        for start in range(0, len(candidates), BLOCK):
            block = candidates[start:start + BLOCK]
            out[start:start + len(block)] = self._block(block)[:, ids]
        return out

    def counts(self, candidates: Sequence[Candidate],
               active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """P and N: the positive and the negative examples each clause covers.

        This is the one query of the search on private data; a DP reduction replaces it by
        noisy counts of the same shapes.

        Args:
            candidates: The clauses.
            active: Which examples count (booleans aligned with the examples); all by default.

        Returns:
            Two int64 arrays with one entry per clause.
        """
        labels = self.database.examples.labels
        active = np.ones(len(labels), dtype=bool) if active is None else active
        weights = np.stack([active & labels, active & ~labels], axis=1).astype(np.float64)
        totals = np.zeros((len(candidates), 2), dtype=np.int64)
        for start in range(0, len(candidates), BLOCK):
            block = self.matrix(candidates[start:start + BLOCK])
            totals[start:start + len(block)] = np.rint(block @ weights).astype(np.int64)
        return totals[:, 0], totals[:, 1]
