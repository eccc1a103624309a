"""The private selection step: a "fake" seed example built from public information only.

Aleph picks a real positive example and saturates it; Zeng et al. (section 5.2) observe that no
sampling of a private record is differentially private, and replace the seed by a "fake"
example built from domain knowledge: in the worst case the conjunction of every literal the
language allows. Its bottom clause reads no private fact, so the selection step spends nothing.

Here the fake example is a bottom clause (`search.BottomClause`, seed -1) made from the public
inputs alone, the modes and the public constant domains of the schema, in one of two ways:

    fake_bottom(modes, schema, literals)   the literals a person declares (public domain
                                           knowledge, Prolog body text), checked against the
                                           modes
    fake_bottom(modes, schema)             the vocabulary: every literal the modes allow over
                                           the public domains (link literals first, then the
                                           tests, in mode order or shuffled by a public seed)

Either way at most k literals are kept (`Modes.max_bottom`, or `k=`), because the lattice of a
bottom clause of k literals has up to 2^k clauses, each one more count to noise; the full size
and whether it was cut are reported (`BottomClause.full_size`, `.truncated`). A declared list
longer than k is refused rather than cut: which literals to drop is the declarer's choice.

`fake_for_target` is for generated tasks (the benchmark, the ChoiceMaker's corpus): the literals
of a known target theory plus public distractors up to k. It stands for the domain knowledge
that the target's literals are among the candidates; with a fake example that misses a literal
of the target, no reduction can learn the target exactly.

Nothing here reads a row: only `schema.predicates`, the relations' column types and the
`Domain` values, which are public.
"""

from __future__ import annotations

from itertools import product
from typing import Sequence

import numpy as np

from jostle.learners.ilp.modes import ModeError, Modes
from jostle.learners.ilp.relations import Domain, RelationalDatabase
from jostle.learners.ilp.search import BottomClause, BottomLiteral, Spec
from jostle.learners.ilp.theory import Atom, Const, Theory, TheoryError, Var, _Reader, parse_theory

#: The seed id of a fake example's bottom clause (it is no example of the database).
FAKE_SEED = -1


def _constant_domains(modes: Modes, schema: RelationalDatabase, index: int) -> list[Domain]:
    """The public domains of a mode's `#` arguments, in order."""
    mode = modes.body[index]
    predicate = schema.predicates[mode.predicate]
    domains = []
    for position in mode.constants:
        domain = schema.arg_type(predicate, position)
        assert isinstance(domain, Domain)  # Modes.check refuses a constant over entities
        domains.append(domain)
    return domains


def _specs(modes: Modes, schema: RelationalDatabase, index: int) -> list[Spec]:
    """Every literal of one mode: one per combination of its constants' public values."""
    values = [domain.values for domain in _constant_domains(modes, schema, index)]
    return [Spec(index, tuple(constants)) for constants in product(*values)]


def vocabulary(modes: Modes, schema: RelationalDatabase) -> list[BottomLiteral]:
    """Every literal the modes allow over the public domains: the worst-case fake example.

    Tests on the head variable come first (variable 0), then for each link mode its literals,
    each link introducing a new existential variable (1, 2, ...) followed by every test on that
    variable's type. Reads the schema's types and domains only.

    Args:
        modes: The language bias (checked against the schema).
        schema: A database whose predicates and domains are public (its rows are not read).
    """
    modes.check(schema)
    head: list[BottomLiteral] = []
    linked: list[BottomLiteral] = []
    variable = 0
    for index, mode in enumerate(modes.body):
        if mode.output is None and mode.types[mode.input] == modes.head_type:
            head.extend(BottomLiteral(spec, 0) for spec in _specs(modes, schema, index))
        elif mode.output is not None:
            for spec in _specs(modes, schema, index):
                variable += 1
                linked.append(BottomLiteral(spec, variable))
                for test_index, test in enumerate(modes.body):
                    if test.output is None and test.types[test.input] == mode.types[mode.output]:
                        linked.extend(BottomLiteral(test_spec, variable)
                                      for test_spec in _specs(modes, schema, test_index))
    return head + linked


def _spec_of(atom: Atom, modes: Modes, schema: RelationalDatabase) -> Spec:
    """The mode literal an atom is an instance of (the first mode that fits it)."""
    for index, mode in enumerate(modes.body):
        if mode.predicate != atom.predicate or len(mode.markers) != len(atom.args):
            continue
        if all(isinstance(arg, Const) == (marker == "#")
               for arg, marker in zip(atom.args, mode.markers)):
            constants = tuple(str(atom.args[p]) for p in mode.constants)
            for domain, value in zip(_constant_domains(modes, schema, index), constants):
                if value not in domain.values:
                    raise TheoryError(f"fake example: in {atom}, {value!r} is not in the public "
                                      f"domain {domain.name} ({', '.join(domain.values)})")
            return Spec(index, constants)
    allowed = ", ".join(str(mode) for mode in modes.body if mode.predicate == atom.predicate)
    raise ModeError(f"fake example: {atom} fits no mode declaration"
                    + (f" (the modes of {atom.predicate}: {allowed})" if allowed else
                       f" ({atom.predicate} has no mode)"))


def _literals_of(atoms: Sequence[Atom], modes: Modes, schema: RelationalDatabase) -> list[BottomLiteral]:
    """Bottom literals of declared atoms: variables numbered, links checked before their tests."""
    head_var: str | None = None
    numbers: dict[str, int] = {}
    literals: list[BottomLiteral] = []
    for atom in atoms:
        spec = _spec_of(atom, modes, schema)
        mode = modes.body[spec.mode]
        input_var = atom.args[mode.input]
        assert isinstance(input_var, Var)
        if mode.types[mode.input] == modes.head_type:
            if head_var is None:
                head_var = input_var.name
            elif input_var.name != head_var:
                raise ModeError(f"fake example: {atom} tests {input_var} but the example is "
                                f"{head_var}: one example per fake example")
            if mode.output is None:
                literals.append(BottomLiteral(spec, 0))
                continue
            output = atom.args[mode.output]
            assert isinstance(output, Var)
            if output.name in numbers:
                raise ModeError(f"fake example: {output} is introduced twice (in {atom})")
            numbers[output.name] = len(numbers) + 1
            literals.append(BottomLiteral(spec, numbers[output.name]))
        elif input_var.name in numbers:
            literals.append(BottomLiteral(spec, numbers[input_var.name]))
        else:
            raise ModeError(f"fake example: {atom} tests {input_var}, which no link literal "
                            f"before it introduces (write the link first, e.g. "
                            f"has_car(T, {input_var}))")
    unique = list(dict.fromkeys(literals))
    return unique


def _read_body(text: str) -> list[Atom]:
    """Atoms of a Prolog body text: `a(X), b(X, c)` (a final '.' is optional)."""
    reader = _Reader(text.strip().rstrip(".") + " .")
    atoms = [reader.atom()]
    while reader.peek() is not None and reader.peek()[1] == ",":
        reader.take("punct", ",")
        atoms.append(reader.atom())
    reader.take("punct", ".")
    if reader.peek() is not None:
        raise TheoryError(f"fake example: unexpected {reader.peek()[1]!r} after the literals")
    return atoms


def fake_bottom(modes: Modes, schema: RelationalDatabase,
                literals: str | Sequence[str] | None = None, *, k: int | None = None,
                seed: int | None = None) -> BottomClause:
    """The bottom clause of a fake example, from public information only.

    Args:
        modes: The language bias.
        schema: A database whose predicates and domains are public (its rows are not read).
        literals: The declared literals (Prolog body text, or one literal per string), e.g.
            "has_car(T, C), short(C), closed(C)"; None for the vocabulary of the modes.
        k: The most literals kept (default `modes.max_bottom`).
        seed: A public seed shuffling the vocabulary's tests before the cut at k (None: mode
            order). Ignored for declared literals.

    Returns:
        A `BottomClause` with seed -1, at most k literals, its full size and bound k.

    Raises:
        ModeError: A declared literal fits no mode, tests a variable no link introduced, or the
            declaration holds more than k literals.
        TheoryError: Text that is not Prolog, or a constant outside its public domain.
    """
    modes.check(schema)
    bound = modes.max_bottom if k is None else int(k)
    if bound < 0:
        raise ModeError(f"the bound k on the fake example must not be negative, got {bound}")
    if literals is not None:
        text = literals if isinstance(literals, str) else ", ".join(literals)
        declared = _literals_of(_read_body(text), modes, schema)
        if len(declared) > bound:
            raise ModeError(f"the fake example declares {len(declared)} literals but k is "
                            f"{bound}: its lattice would have up to 2^{len(declared)} clauses; "
                            f"drop literals or raise k (max_bottom)")
        return BottomClause(FAKE_SEED, tuple(declared), len(declared), bound)
    every = vocabulary(modes, schema)
    if seed is not None:
        every = _shuffled(every, modes, np.random.default_rng(seed))
    kept = _cut(every, modes, bound)
    return BottomClause(FAKE_SEED, tuple(kept), len(every), bound)


def _is_link(literal: BottomLiteral, modes: Modes) -> bool:
    return modes.body[literal.spec.mode].output is not None


def _shuffled(literals: list[BottomLiteral], modes: Modes,
              rng: np.random.Generator) -> list[BottomLiteral]:
    """Links in their order, the tests in a public random order (the links stay first)."""
    links = [lit for lit in literals if _is_link(lit, modes)]
    tests = [lit for lit in literals if not _is_link(lit, modes)]
    order = rng.permutation(len(tests))
    return links + [tests[i] for i in order]


def _cut(literals: list[BottomLiteral], modes: Modes, bound: int) -> list[BottomLiteral]:
    """The first `bound` literals, links first, dropping tests whose link did not make it."""
    links = [lit for lit in literals if _is_link(lit, modes)]
    tests = [lit for lit in literals if not _is_link(lit, modes)]
    kept = links[:bound]
    variables = {0} | {lit.variable for lit in kept}
    kept += [lit for lit in tests if lit.variable in variables][:bound - len(kept)]
    return kept


def fake_for_target(target: str | Theory, modes: Modes, schema: RelationalDatabase, k: int,
                    seed: int) -> BottomClause:
    """A fake example holding a known target's literals plus public distractors, up to k.

    For generated tasks only (the benchmark, the ChoiceMaker's corpus): it stands for domain
    knowledge that the target's literals are candidates. Every clause of the target must use
    one link literal and tests the modes allow; all clauses share one existential variable
    (their link literals must be the same literal, e.g. has_car(T, C)).

    Args:
        target: The target theory (Prolog text or a parsed `Theory`).
        modes: The language bias.
        schema: The public schema.
        k: The most literals (the target's literals must fit).
        seed: A public seed choosing the distractors among the vocabulary's other tests.
    """
    theory = target if isinstance(target, Theory) else parse_theory(target, schema)
    wanted: list[BottomLiteral] = []
    for clause in theory.clauses:
        for literal in _literals_of(clause.body, modes, schema):
            if literal not in wanted:
                wanted.append(literal)
    links = {lit.spec for lit in wanted if _is_link(lit, modes)}
    if len(links) > 1:
        raise ModeError(f"fake_for_target: the target's clauses use {len(links)} different "
                        f"link literals; one fake example holds one existential variable")
    if len(wanted) > k:
        raise ModeError(f"fake_for_target: the target has {len(wanted)} distinct literals, "
                        f"more than k = {k}")
    variable = next((lit.variable for lit in wanted if _is_link(lit, modes)), 1)
    pool = [lit for lit in vocabulary(modes, schema)
            if not _is_link(lit, modes) and lit.variable in (0, 1)]
    pool = [BottomLiteral(lit.spec, variable if lit.variable else 0) for lit in pool]
    pool = [lit for lit in pool if lit not in wanted]
    if not links:  # tests on the head only: no existential distractors
        pool = [lit for lit in pool if lit.variable == 0]
    rng = np.random.default_rng(seed)
    chosen = [pool[i] for i in sorted(rng.permutation(len(pool))[:max(k - len(wanted), 0)])]
    literals = [lit for lit in wanted if _is_link(lit, modes)]
    literals += sorted([lit for lit in wanted if not _is_link(lit, modes)] + chosen,
                       key=lambda lit: (lit.variable, lit.spec))
    return BottomClause(FAKE_SEED, tuple(literals), len(literals), k)

