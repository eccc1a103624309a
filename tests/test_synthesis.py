"""Synthesised metafeatures and predict rules (jostle/choicemaker/synthesis*.py), derived
metafeatures in the language, and the privacy audit: a ChoiceMaker reading synthesised
metafeatures charges exactly what its base releases cost, and nothing else."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.choicemaker.synthesis import (Expression, Statistic, candidates, choice_regrets, select_expressions,
                                          statistics_of, synthesis_data)
from jostle.choicemaker.synthesis_report import nested_evaluation, winners_code
from jostle.choicemaker.synthesis_rules import fit_rules

CONFIG = ("task", "group", "epsilon")
STATISTICS = [Statistic("domain_size"), Statistic("epsilon"), Statistic("profile_size", "profile"),
              Statistic("profile_roughness", "profile")]


def planted_experience(signal: float = 1.0, seed: int = 0, groups: int = 8) -> pd.DataFrame:
    """DAWA is better when the (noisy) roughness is above 0.5, Identity below: by `signal`."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(groups):
        for epsilon in (0.1, 1.0):
            rough = rng.uniform(0, 1)
            for rep in range(2):
                noisy = rough + rng.normal(0, 0.05)
                size = rng.uniform(500, 5000)
                common = {"task": f"t{g}", "group": f"g{g}", "epsilon": epsilon, "rep": rep, "mode": "measured",
                          "mf_domain_size": 16.0, "mf_epsilon": epsilon, "mf_profile_size": size,
                          "mf_profile_roughness": noisy}
                dawa = 1.0 + signal * (rough < 0.5) + 0.05 * rng.random()
                identity = 1.0 + signal * (rough >= 0.5) + 0.05 * rng.random()
                rows += [{**common, "option": "DAWA", "error": dawa / epsilon},
                         {**common, "option": "Identity", "error": identity / epsilon}]
    return pd.DataFrame(rows)


def test_expression_code_computes_what_numpy_computes():
    columns = {"a": np.array([2.5]), "b": np.array([0.5])}
    with Session(budget=1, seed=0, ledger_path=":memory:") as session:
        session.run("F = {a: 2.5, b: 0.5}\n")
        for op in ("x", "log", "sqrt", "square", "above"):
            expression = Expression(op, ("a",), 1.0)
            assert session.eval(expression.code()) == pytest.approx(expression.values(columns)[0])
        for op in ("product", "log_product", "ratio"):
            expression = Expression(op, ("a", "b"))
            assert session.eval(expression.code()) == pytest.approx(expression.values(columns)[0])


def test_statistics_pay_a_shared_release_once_and_derived_ones_read_their_sources():
    features = [SimpleNamespace(name="epsilon", cost=False), SimpleNamespace(name="profile_size", cost=True,
                                                                               release="profile"),
                SimpleNamespace(name="size", cost=True), SimpleNamespace(name="per", cost=False,
                                                                         requires=("size", "epsilon"))]
    found = {s.name: s.unit for s in statistics_of(features)}
    assert found == {"epsilon": "", "profile_size": "profile", "size": "size", "per": "size"}


def test_the_search_finds_a_planted_threshold_and_beats_best_fixed_held_out():
    data = synthesis_data(planted_experience(), STATISTICS, CONFIG, share=0.05)
    found = select_expressions(data, max_terms=2)
    assert found.expressions and found.expressions[0].args == ("profile_roughness",)
    assert found.units == frozenset({"profile"})
    evaluation = nested_evaluation(data, [Expression("x", (s.name,)) for s in STATISTICS], outer_folds=2,
                                   inner_folds=2, max_terms=1, model_kinds=("forest_regret",), rules=False)
    summary = evaluation.summary()
    assert summary["synthesised"]["avg_regret"] < summary["best_fixed"]["avg_regret"] - 0.1


def test_without_signal_the_cost_keeps_the_search_from_measuring():
    data = synthesis_data(planted_experience(signal=0.0), STATISTICS, CONFIG, share=0.2)
    assert data.cost_factor([]) == pytest.approx(0.8)  # measuring nothing: the whole budget
    assert data.cost_factor([Expression("x", ("profile_size",))]) == pytest.approx(1.0)
    assert data.cost_factor([Expression("x", ("epsilon",))]) == pytest.approx(0.8)  # public: free
    found = select_expressions(data, max_terms=2)
    assert not found.units  # nothing noisy pays for its share


def test_the_cost_counts_the_share_each_row_paid_where_the_family_raised_it():
    # As the histogram floor does at small budgets: epsilon 0.1 paid 20%, epsilon 1 the nominal 5%.
    experience = planted_experience(signal=0.0)
    paid = np.where(experience["epsilon"] == 0.1, 0.2, 0.05)
    experience["option_epsilon"] = experience["epsilon"] * (1.0 - paid)
    experience["measure"] = "pure"
    data = synthesis_data(experience, STATISTICS, CONFIG, share=0.05)
    rows = data.measured
    small = rows.columns["epsilon"] == 0.1
    assert rows.shares[small] == pytest.approx(0.2) and rows.shares[~small] == pytest.approx(0.05)
    assert data.cost_factor([], rows)[small] == pytest.approx(0.8)  # measuring nothing: the whole budget
    assert data.cost_factor([], rows)[~small] == pytest.approx(0.95)
    assert data.cost_factor([Expression("x", ("profile_size",))], rows) == pytest.approx(1.0)
    # the whole-budget reference of a configuration scales by its own share
    config = int(rows.config[np.flatnonzero(small)[0]])
    best = pd.DataFrame(rows.errors[rows.config == config]).mean().min()
    assert data.reference[config] == pytest.approx(0.8 * best)
    assert synthesis_data(planted_experience(signal=0.0), STATISTICS, CONFIG, share=0.05).measured.shares is None


def test_thresholds_come_from_the_training_rows():
    columns = {"profile_roughness": np.array([0.1, 0.2, 0.3, 0.9])}
    made = candidates(columns, [Statistic("profile_roughness", "profile")], ops=("above",))
    assert {e.constant for e in made} <= {float(f"{q:.4g}") for q in np.quantile(columns["profile_roughness"],
                                                                                  (0.25, 0.5, 0.75))}


def test_predict_rules_rank_the_options_by_the_planted_signal():
    data = synthesis_data(planted_experience(signal=2.0), STATISTICS, CONFIG, share=0.05)
    rules = fit_rules(data.measured, [Expression("above", ("profile_roughness",), 0.5)])
    chosen = rules.choose(data.measured)
    rough = data.measured.columns["profile_roughness"]
    assert (np.array(rules.options)[chosen] == np.where(rough > 0.5, "DAWA", "Identity")).mean() > 0.8


PROGRAM_HEAD = """ages = t.bin("age", range(0, 101, 10))
h = histogram(ages, "age")
q = all_ranges(10)
"""


def _session() -> Session:
    rng = np.random.default_rng(0)
    session = Session(budget=10, seed=1, ledger_path=":memory:")
    session.bind_private("t", pd.DataFrame({"age": rng.integers(0, 100, 300)}), {"age": ("numeric", 0, 100)})
    return session


def _charges(session: Session) -> list[tuple[str, float]]:
    return [(charge.mechanism, float(charge.budget.epsilon)) for charge in session.ledger]


def test_the_generated_code_parses_and_runs_and_charges_only_its_base_release():
    data = synthesis_data(planted_experience(signal=2.0), STATISTICS, CONFIG, share=0.05)
    winners = winners_code(data, ["h", "q"], "none", max_terms=2, share=0.05)
    assert "def profile_roughness_above_" in winners.code and "predict(F):" in winners.code
    with _session() as session:
        session.run(PROGRAM_HEAD + winners.definitions + winners.rules_code +
                    "with budget 1:\n    e = synthesised_rules(h, q)\n")
        record = session.eval("trace(synthesised_rules)[0]")
        assert record.get("choice") in ("DAWARule", "IdentityRule")
        # the derived metafeatures were computed from the released profile, free
        assert all(e.name in dict(record["metafeatures"]) for e in winners.rule_selection.expressions
                   if e.op != "x")
        assert _charges(session) == [("metafeature profile", 0.05), (f"option {record.get('choice')[:-4]}", 0.95)]


DERIVED = """
def rows_per_cell(F):
    return F.profile_size / max(F.domain_size, 1)
def rough(F):
    return 1 if F.profile_roughness > 0.5 else 0
"""
PRIORS = """
option A(h, q):
    answer:
        return DAWA(h, q)
    predict(F):
        return 1 + F.profile_roughness
option B(h, q):
    answer:
        return Identity(h, q)
    predict(F):
        return 1.5
"""


@pytest.mark.parametrize("budget", ["1", "0.3"])
def test_audit_derived_metafeatures_charge_exactly_what_their_base_release_costs(budget):
    """The same ChoiceMaker with and without derived metafeatures: the same charges, to the bit
    (the derived ones are post-processing of the profile's release), the whole budget in all."""
    charged = []
    for features in ("domain_size, profile_size, profile_roughness",
                     "domain_size, profile_size, profile_roughness, rows_per_cell, rough"):
        with _session() as session:
            session.run(PROGRAM_HEAD + DERIVED + PRIORS +
                        f"choicemaker H among {{A, B}} informed by {{{features}}} trained on none\n"
                        f"with budget {budget}:\n    e = H(h, q)\n")
            charged.append(_charges(session))
            features_seen = dict(session.eval("trace(H)[0]")["metafeatures"])
    assert charged[0] == charged[1]
    assert [m for m, _ in charged[1]][0] == "metafeature profile" and len(charged[1]) == 2
    assert sum(e for _, e in charged[1]) == pytest.approx(float(budget))
    assert features_seen["rows_per_cell"] == pytest.approx(features_seen["profile_size"] / 10)


def test_a_function_that_releases_or_reads_unlisted_fields_is_not_derived():
    from jostle.language.choice_values import derived_reads

    with _session() as session:
        session.run("def a(F):\n    return F.size + 1\ndef b(F):\n    return {{ F.size }}\n"
                    "def c(F):\n    return F.other\ndef d(F):\n    return len(F)\n")
        functions = {n: session.interpreter.globals.lookup(n) for n in "abcd"}
    assert derived_reads(functions["a"], ["size"]) == ("size",)
    assert derived_reads(functions["b"], ["size"]) == ()
    assert derived_reads(functions["c"], ["size"]) == ()
    assert derived_reads(functions["d"], ["size"]) == ()
    assert derived_reads(functions["a"], []) == ()  # listed after what it reads only


def test_a_derived_metafeature_trains_and_dispatches(tmp_path, monkeypatch):
    """Trained on a (tiny) corpus, a derived metafeature is computed in training from the
    simulated releases and at run time from the real ones; the charges stay the base release's."""
    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))
    from jostle.language.values import CorpusValue
    from jostle.learners.histograms.corpus import Corpus, default_corpus
    from jostle.learners.histograms.task import TrainingGrid

    with _session() as session:
        session.run(PROGRAM_HEAD + DERIVED + "choicemaker H among {DAWA, Identity} informed by "
                    "{domain_size, profile_size, rows_per_cell} trained on histogram_corpus() "
                    "spending 0.05 on metafeatures\n")
        maker = session.interpreter.globals.lookup("H")
        maker.corpus = CorpusValue(Corpus("tiny", default_corpus(1).shapes[:2]), "tiny", task="histogram",
                                   item_name="shapes")
        maker.grid = TrainingGrid(scales=(1000,), domains_1d=(10,), epsilons=(0.5,), repetitions=1)
        session.run("with budget 1:\n    e = H(h, q)\n")
        table = maker.trained.experience
        assert np.allclose(table["mf_rows_per_cell"], table["mf_profile_size"] / table["mf_domain_size"])
        charges = _charges(session)
        assert all(m in ("metafeature profile",) or m.startswith("option ") for m, _ in charges)
        assert sum(e for _, e in charges) == pytest.approx(1.0)


def test_transfer_selects_on_one_corpus_and_reports_on_another():
    from jostle.choicemaker.synthesis_report import transfer_evaluation

    train = synthesis_data(planted_experience(seed=1), STATISTICS, CONFIG, share=0.05)
    test = synthesis_data(planted_experience(seed=2), STATISTICS, CONFIG, share=0.05)
    evaluation = transfer_evaluation(train, test, [Expression("x", ("epsilon",))], inner_folds=2, max_terms=1,
                                     model_kinds=("forest_regret",))
    summary = evaluation.summary()
    assert evaluation.folds[0]["synthesised"] and summary["synthesised"]["configurations"] == 16
    assert summary["synthesised"]["avg_regret"] < summary["best_fixed"]["avg_regret"] - 0.1


def test_the_shipped_synthesised_tree_rules_run_and_charge_only_the_option():
    """stdlib/synthesised.jst: its rules read only the public epsilon, so the chosen learner
    gets the whole budget; below epsilon 0.475 they pick OneRule, above FriedmanSchusterLeanStop."""
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, 400), rng.integers(0, 2, 400)
    frame = pd.DataFrame({"a": a.astype(str), "b": b.astype(str), "class": np.where((a == 1) | (b == 1), "y", "n")})
    schema = {"a": ("categorical", ["0", "1", "2"]), "b": ("categorical", ["0", "1"]),
              "class": ("categorical", ["n", "y"])}
    with Session(budget=10, seed=1, ledger_path=":memory:") as session:
        session.bind_private("t", frame, schema)
        session.run('import synthesised\nm1 = synthesised.learn_tree(t, "class", 0.2)\n'
                    'm2 = synthesised.learn_tree(t, "class", 1)\n')
        assert _charges(session) == [("option OneRule", 0.2), ("option FriedmanSchusterLeanStop", 1.0)]


def test_a_difference_family_scores_synthesis_by_error_differences():
    # the classifiers' regret measure (`Family.regret_measure`) reaches the search's targets and scores
    ratio = synthesis_data(planted_experience(), STATISTICS, CONFIG, share=0.05)
    difference = synthesis_data(planted_experience(), STATISTICS, CONFIG, share=0.05, regret_measure="difference")
    rows = difference.measured
    assert rows.regret_measure == "difference" and rows.rows(rows.groups == rows.groups[0]).regret_measure == "difference"
    mean = pd.DataFrame(rows.errors).groupby(rows.config).transform("mean").to_numpy()
    assert np.allclose(rows.regret_targets(), np.minimum(1.0 + mean - mean.min(axis=1, keepdims=True), 10.0))
    assert np.allclose(ratio.measured.regret_targets(), np.minimum(mean / mean.min(axis=1, keepdims=True), 10.0))
    chosen = np.zeros(len(rows.errors), dtype=int)
    scored = choice_regrets(difference, rows, chosen, 1.0).set_index("config")["regret"]
    frame = pd.DataFrame({"config": rows.config, "chosen": rows.errors[:, 0]}).groupby("config")["chosen"].mean()
    best = pd.Series(difference.reference)
    assert np.allclose(scored.to_numpy(), 1.0 + frame.loc[scored.index].to_numpy() - best.loc[scored.index].to_numpy())
