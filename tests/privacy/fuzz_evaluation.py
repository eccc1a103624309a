"""The fuzzers' calls of private evaluation (issue 28): `split`, a released model inside a row
function (`predict(model, r)`, `predict_proba`), and the charged releases `private_accuracy`,
`confusion_matrix`, `auc` and `calibration` (jostle.language.evaluation).

`evaluation_statements(generator)` (neighbour_fuzz.py, family "evaluation"): on ANY of a case's
tables, private and public, with arguments drawn valid and invalid: a model trained by the
non-private C45 on a public table (free) or privately on the private table (a charge), or a value
that is no model; then the model applied in row functions of the private table (whose columns
and domains may differ from the model's: a category the model never saw gives none, a missing or
numeric column is refused on the schema), splits with valid and invalid shares, and the four
releases with valid and invalid targets, classes, bins and budgets. Before the first charge,
everything the program shows must be the same on both neighbours.

`replay_evaluation_call(generator)` (fuzz_replay.py, learner form "evaluation"): the case's base
table (`t`, or `b` bounded per key) is split into parts with `split`; a tree is trained on one part
(on `bound_per_key(1)` of it in entity_bounded cases, the learners' unit) and evaluated on another
part, or on the whole table; or, on every unit, a public C45 model of the lookup `look` is
evaluated on the private table joined with it (stability above 1); by one or two of the releases, or through a row function (a derived
prediction column released as a histogram, a filter on `predict(m, r) == r.label` released as a
count, a binned `predict_proba` column). Every release is a replay-recorded geometric or Gaussian
noise point whose claim is the table's stability in L1 / L2: on neighbours (one row, one
replacement, one entity) the pre-noise counts, given D's transcript (so D's model), must move by
at most that much. The split draws its key from the seeded session randomness, the same on both
runs: a row's part is a function of the row, so the common rows land in the same parts (a
positional split would move many rows between parts: `test_evaluation_audits.py` plants one).
"""

from __future__ import annotations

from typing import Any

TREES = ["FriedmanSchuster", "Mohammed", "OneRule", "Majority", "BinaryTree"]
SHARES = ["0.5", "0.7", "[0.4, 0.3, 0.3]"]


BAD_SHARES = ["0", "1", "1.5", "[0.5, 0.6]", '"half"', "[]", "none", "count(t)"]
EPSILONS = ["1", "0.5", "0", "-1", '"a"', "count(t)"]


def evaluation_statements(generator: Any) -> list[str]:
    """A model, then one to three uses of it (module docstring)."""
    from tests.privacy.neighbour_fuzz import _lit

    pick, chance = generator.pick, generator.chance
    private = generator.some_table(True)
    publics = generator.table_names(False)
    model = generator.fresh("mdl")
    statements = []
    categorical = [c.name for c in generator.columns_of(private, ("text", "code", "mixed"))]
    if publics and chance(0.5):
        public = pick(publics)
        target = generator.column_name(public, ("text", "code", "mixed")) if chance(0.9) else "nosuch"
        statements.append(f'{model} = C45({public}, "{target}")')
    elif categorical and chance(0.7):
        statements.append(f'{model} = {pick(TREES)}({private}, "{pick(categorical)}", epsilon={pick(EPSILONS)})')
    else:
        statements.append(f"{model} = {pick(['3', '[1, 2]', private, 'none'])}")
    target = pick(categorical) if categorical and chance(0.8) else generator.column_name(private)
    label = _lit(pick(list(generator.columns_of(private, ("text", "code", "mixed"))[0].values))) \
        if categorical and chance(0.7) else pick(['"yes"', "1", "none"])
    table = pick([private, private, generator.some_table(None)])
    for _ in range(pick([1, 2, 3])):
        form = pick(["predict", "proba", "where", "split", "release", "column"])
        if form == "predict":
            statements.append(f'print(count({table}.derive("p_", lambda r: predict({model}, r), '
                              f'categorical([{label}, "zz"], default="zz"))))')
        elif form == "proba":
            statements.append(f'print(count({table}.derive("q_", lambda r: predict_proba({model}, r, {label}), '
                              f"numeric(0, 1))))")
        elif form == "where":
            statements.append(f"print(count({table}.where(lambda r: predict({model}, r) == r.{target})))")
        elif form == "column":  # a column passed where the whole row belongs: refused on its type
            statements.append(f"print(count({table}.where(lambda r: predict({model}, r.{target}) == 1)))")
        elif form == "split":
            parts = generator.fresh("sp")
            shares = pick(SHARES + BAD_SHARES)
            statements.append(f"{parts} = split({table}, {shares})\nprint(len({parts}), {parts}[0])")
        else:
            call = pick(["private_accuracy", "confusion_matrix", "auc", "calibration"])
            positive = f", {label}" if call in ("auc", "calibration") else ""
            bins = f", bins={pick(['3', '0', '1001', '2.5'])}" if positive and chance(0.5) else ""
            budget = f", epsilon={pick(EPSILONS)}" if chance(0.8) else ""
            statements.append(f'print({call}({model}, {table}, "{target}"{positive}{bins}{budget}))')
    return statements


def replay_evaluation_call(generator: Any) -> str:
    """A split, a model and one or two evaluations, printed: a tree fitted on a part (row and
    entity_bounded cases, the learners' unit) or, on any unit, the non-private C45 fitted on the
    public lookup `look` and evaluated on the private table joined with it (stability 2 x the
    table's: a release calibrated above one row)."""
    pick, eps = generator.pick, generator.eps
    parts, model = generator.fresh("parts"), generator.fresh("model")
    lines = []
    if generator.unit in ("row", "entity_bounded") and generator.chance(0.7):
        columns = '["grp", "c2", "label"]' if generator.unit == "row" else '["grp", "c2", "label", "pid"]'
        lines.append(f"{parts} = split(select({generator.base}, {columns}), {pick(SHARES)})")
        train = f"{parts}[0]" if generator.unit == "row" else f"{parts}[0].bound_per_key(1)"
        lines.append(f'{model} = {pick(TREES)}(select({train}, ["grp", "c2", "label"]), "label", epsilon={eps()})')
        test, target, positive = pick([f"{parts}[1]", f"{parts}[1]", generator.base]), "label", '"yes"'
    else:
        base = generator.base if generator.unit != "entity" else f"t.bound_per_key({pick([1, 2])})"
        lines.append(f'{model} = C45(look.bin("sides", [0, 3, 6]), "grp")')
        joined = f'{base}.join(look, on="grp").bin("sides", [0, 3, 6])'
        lines.append(f"{parts} = split({joined}, {pick(SHARES)})")
        test, target, positive = pick([f"{parts}[1]", f"{parts}[0]", joined]), "grp", '"a"'
    budget = f"rho={pick(['0.5', '0.1'])}" if generator.zcdp and generator.chance(0.5) else f"epsilon={eps()}"
    for _ in range(pick([1, 2])):
        form = pick(["accuracy", "confusion", "auc", "calibration", "derive", "where", "proba"])
        if form == "accuracy":
            lines.append(f'print(private_accuracy({model}, {test}, "{target}", {budget}))')
        elif form == "confusion":
            lines.append(f'print(confusion_matrix({model}, {test}, "{target}", {budget}))')
        elif form == "auc":
            lines.append(f'print(auc({model}, {test}, "{target}", {positive}, bins={pick([1, 3, 10])}, {budget}))')
        elif form == "calibration":
            lines.append(f'print(calibration({model}, {test}, "{target}", {positive}, bins={pick([2, 4])}, {budget}))')
        elif form == "derive":
            scored = generator.fresh("scored")
            lines.append(f'{scored} = {test}.derive("pred", lambda r: predict({model}, r), '
                         f'categorical(["yes", "no", "a", "b"], default="no"))')
            lines.append(f'print(geometric(histogram({scored}, "pred", "{target}"), {eps()}))')
        elif form == "where":
            lines.append(f"with budget {eps()}:\n"
                         f"    print({{{{ count({test}.where(lambda r: predict({model}, r) == r.{target})) }}}})")
        else:
            scored = generator.fresh("scored")
            lines.append(f'{scored} = {test}.derive("p", lambda r: predict_proba({model}, r, {positive}), '
                         f'numeric(0, 1)).bin("p", [0, 0.25, 0.5, 0.75, 1])')
            lines.append(f'print(laplace(histogram({scored}, "p"), {eps()}))')
    return "\n".join(lines)


__all__ = ["evaluation_statements", "replay_evaluation_call"]
