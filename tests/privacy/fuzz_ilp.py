"""The fuzzers' calls of the DP ILP learner (issue 24): `ILP(...)`, `prolog`, `covers`,
`theory_accuracy` and `ilp_bounds` (jostle.learners.ilp.language).

Two generators, one per fuzzer:

  * `ilp_statements(generator)` (neighbour_fuzz.py, family "ilp"): calls over ANY of a case's
    tables, private and public, with declarations drawn valid and invalid (targets, positive
    labels, `entities`, `ids`, `unary`, `predicates`, `background`, modes, fake examples,
    methods, levels, rounds, k, epsilons). The neighbour fuzzer's private tables are bound under
    the row unit, so a call on them must be refused, before any charge and in the same words
    on both neighbours, whatever the rows; a call on public tables runs the non-private Aleph
    learner for free and prints the same theory on both. `ilp_bounds` reads no row at all.
  * `replay_ilp_call(generator)` (fuzz_replay.py, learner form "ilp"): the private learner on
    an entity-unit case's data, the examples table `t` bounded to one row per key with the
    columns the learner can read (the key, `grp`, `c2`, the label) and, when the case has a
    database, its fact table `cars` (one car per row, `shape` over a public domain), with the
    settings of every reduction (naive, relevance-aware with l and pruning, several rounds, the
    trivial theories), or through the shipped ChoiceMaker (`import ilp; ilp.learn(...)`: its
    noisy example counts, then the chosen Option). Each noisy count is a replay-recorded release
    (`safe_noise.release_counts`), checked against its claim (L1 |L|, or beta_i) on neighbours
    that remove one example and all its cars.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from tests.privacy.neighbour_fuzz import Generator

EPSILONS = ["1", "0.5", "2", "0", "-1", "1e6", '"a"']
SETTINGS = ["", "", ', method="naive"', ', method="majority"', ', method="all_positive"', ", rounds=2",
            ", levels=1", ", levels=0", ", k=4", ", k=0", ", max_length=1", ", min_positives=3", ", min_score=-5",
            ", fake_seed=2", ", levels=-1", ', method="greedy"', ", rounds=0", ', fake="nosuch(T)"', ", sampler=1"]


def _lit(value: Any) -> str:
    from tests.privacy.neighbour_fuzz import _lit as literal

    return literal(value)


def _value_literal(generator: Generator, table: str, column: str) -> str:
    for spec in generator.columns_of(table):
        if spec.name == column and spec.values and generator.chance(0.8):
            return _lit(generator.pick(list(spec.values)))
    return generator.pick(['"yes"', "true", "1", '"a"', '"nosuch"'])


def _declaration(generator: Generator, examples: str, facts: list[str]) -> str:
    """target=, positive= and a random handful of the other declarations (valid or not)."""
    categorical = [c.name for c in generator.columns_of(examples, ("text", "code", "mixed"))]
    target = generator.pick(categorical) if categorical and generator.chance(0.85) else \
        generator.column_name(examples)
    parts = [f'target="{target}"']
    if generator.chance(0.85):
        parts.append(f"positive={_value_literal(generator, examples, target)}")
    if facts and generator.chance(0.7):
        fact = generator.pick(facts)
        parts.append(generator.pick([f'entities={{{fact}: "car"}}', f'entities={{{fact}: "car"}}',
                                     'entities={nosuch: "car"}', f"entities={{{fact}: 3}}"]))
        if generator.chance(0.2):
            parts.append(f'ids={{{fact}: "{generator.column_name(fact)}"}}')
    if generator.chance(0.2):
        parts.append(f'unary=["{generator.column_name(generator.pick([examples, *facts]))}"]')
    if generator.chance(0.1):
        parts.append(f'predicates={{both: ["{generator.column_name(examples)}", "nosuch"]}}')
    if generator.chance(0.15):
        parts.append(f"background=[{generator.some_table(generator.chance(0.3))}]")
    if generator.chance(0.15):
        parts.append(f'key="{generator.column_name(examples)}"')
    if generator.chance(0.25):
        parts.append(generator.pick(['modes=["nosuch(+example)"]', 'modes=["short(car)"]', "modes=3",
                                     f'modes=["{generator.column_name(examples)}(+{examples}, '
                                     f'#{generator.column_name(examples)})"]']))
    return ", ".join(parts)


def ilp_statements(generator: Generator) -> list[str]:
    """A learner call (then its theory printed and evaluated), or a Theorem 3 report."""
    private = generator.chance(0.5)
    examples = generator.some_table(private)
    alike = generator.chance(0.85)  # mostly tables of one kind: mixing them is refused first
    others = [name for name in generator.table_names(private if alike else None) if name != examples]
    facts = generator.rng.sample(others, min(len(others), generator.pick([0, 0, 1, 1, 2])))
    columns = [c.name for c in generator.columns_of(examples)]
    shown = generator.pick([examples, examples, examples, f"{examples}.bound_per_key(1)",
                            f"select({examples}, {_lit(generator.rng.sample(columns, min(len(columns), 2)))})"])
    declared = _declaration(generator, examples, facts)
    arguments = ", ".join([shown, *facts])
    epsilon = f", epsilon={generator.pick(EPSILONS)}" if generator.chance(0.9) else ""
    if generator.chance(0.2):
        return [f"print(ilp_bounds({arguments}, {declared}{epsilon}, "
                f"max_examples={generator.pick(['100', '0', '10 ** 6'])}))"]
    name = generator.fresh("th")
    statements = [f"{name} = ILP({arguments}, {declared}{generator.pick(SETTINGS)}{epsilon})", f"print({name})"]
    publics = generator.table_names(False)
    if publics and generator.chance(0.5):
        tables = ", ".join(generator.rng.sample(publics, min(len(publics), 1 + len(facts))))
        statements.append(f"print({generator.pick(['theory_accuracy', 'covers'])}({name}, {tables}))")
    elif generator.chance(0.3):
        statements.append(f"print(prolog({name}))")
    return statements


# ---------------------------------------------------------------- the replay fuzzer's call
#: What the learner reads of the replay fuzzer's examples table t (its other columns may have
#: domains that are not Prolog constants, which the learner refuses before any charge).
EXAMPLE_COLUMNS = ["pid", "grp", "c2", "label"]
CHOICEMAKER_RATE = 0.1      # calls through `import ilp` (stdlib/ilp.jst, shipped trained) instead of ILP(...)
REPLAY_SETTINGS = ["", ', method="naive"', ', method="naive", rounds=2', ", rounds=2", ", rounds=3, levels=1",
                   ", levels=1", ", levels=2, min_positives=2", ', method="majority"', ', method="all_positive"',
                   ", min_score=-3, rounds=2", ", k=4, max_length=2", ", fake_seed=5, k=6"]


def replay_ilp_call(generator: Any) -> str:
    """`ILP(...)` on an entity-unit case's examples (and its cars when it has a database),
    printed: the theory is post-processing of the recorded releases."""
    facts = ", cars" if generator.database else ""
    entities = generator.pick([', entities={cars: "car"}', ', entities=["car"]']) if generator.database else ""
    fake = ""
    if generator.database and generator.chance(0.3):
        fake = generator.pick([', fake="has_car(T, C), shape(C, rect)"',
                               ', fake=["has_car(T, C), shape(C, oval)", "grp(T, a), has_car(T, C)"]'])
    examples = f"select(t.bound_per_key(1), {_lit(EXAMPLE_COLUMNS)})"
    name = generator.fresh("th")
    if generator.chance(CHOICEMAKER_RATE):  # the shipped ChoiceMaker: its noisy example counts, then an Option
        task = generator.fresh("task")
        return (f"import ilp\n{task} = ilp_task(target=\"label\", positive=\"yes\"{entities}{fake})\n"
                f"{name} = ilp.learn({examples}, {facts.lstrip(', ') or '[]'}, {task}, {generator.eps()})\n"
                f"print({name})\nprint(ilp.choices()[-1])")
    if generator.chance(0.2):  # the declarations as one public value, `ilp_task(...)`
        task = generator.fresh("task")
        return (f'{task} = ilp_task(target="label", positive="yes"{entities}{fake}{generator.pick(REPLAY_SETTINGS)})\n'
                f"{name} = ILP({examples}{facts}, {task}, epsilon={generator.eps()})\nprint({name})")
    return (f'{name} = ILP({examples}{facts}, target="label", positive="yes"{entities}{fake}, '
            f"epsilon={generator.eps()}{generator.pick(REPLAY_SETTINGS)})\nprint({name})")


__all__ = ["EXAMPLE_COLUMNS", "ilp_statements", "replay_ilp_call"]
