"""The language side of Options and the ChoiceMaker: syntax, calls, accounting, traces.

Accounting is checked exactly against the ledger: a dispatch with budget E and metafeature
share s spends s*E on its costly metafeatures (split evenly) and (1 - s)*E on the chosen
option, E in all (at budgets where s*E is at least the histogram family's floor of epsilon
0.001: below it the family raises s, tests/test_histogram_share_floor.py), and a dispatch that
cannot be paid for spends nothing.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import BudgetExceeded, CheckError, JostleRuntimeError, JostleSyntaxError

SCHEMA = {"x": {"type": "numeric", "bounds": [0, 16]}}


def _session(budget: float = 1.0, rows: int = 400, seed: int = 3) -> Session:
    rng = np.random.default_rng(seed)
    session = Session(budget=budget, seed=seed)
    session.bind_private("t", pd.DataFrame({"x": rng.integers(0, 16, rows)}), SCHEMA)
    session.run('b = t.bin("x", range(17))\nh = histogram(b, "x")\nq = all_ranges(16)\n')
    return session


def prior_options(flat_prior: str, cells_prior: str) -> str:
    """Two Jostle options, Flat (a noisy total spread evenly) and Cells (noisy cells), whose
    predict(F) priors are the given expressions of the metafeature record F."""
    return f"""
option Flat(db, queries):
    answer:
        n = {{{{ sum(db) }}}}
        return map(lambda i: n / 16, range(16))
    predict(F):
        return {flat_prior}

option Cells(db, queries):
    answer:
        return {{{{ db }}}}
    predict(F):
        return {cells_prior}
"""


PRIOR_OPTIONS = prior_options("F.zero_share", "1 - F.zero_share") + """
def zero_share(db):
    return {{ zeros(db) }} / 16
"""


def _spent(session: Session) -> Fraction:
    return sum((c.budget.epsilon for c in session.ledger), Fraction(0))


# ---------------------------------------------------------------- syntax and checks
def test_option_needs_an_answer_clause():
    with pytest.raises(JostleSyntaxError) as caught:
        Session(budget=1).run("option A(db, q):\n    predict(F):\n        return 1\n")
    assert "no answer clause" in caught.value.message
    assert caught.value.span.line == 1


def test_choicemaker_names_are_checked_before_running():
    with pytest.raises(CheckError) as caught:
        Session(budget=1).run("choicemaker H among {Nope} informed by {sparsity} trained on none\n")
    assert "Nope" in caught.value.message
    assert (caught.value.span.line, caught.value.span.column) == (1, 22)


def test_a_listed_name_must_be_an_option():
    session = Session(budget=1)
    with pytest.raises(JostleRuntimeError) as caught:
        session.run("f = 3\nchoicemaker H among {f} informed by {sparsity} trained on none\n")
    assert "not an option" in caught.value.message
    assert (caught.value.span.line, caught.value.span.column) == (2, 22)


def test_soft_keywords_stay_usable_as_names():
    session = Session(budget=1)
    session.run("predict = 2\non = 3\nby = predict * on\nanswer = by\n")
    assert session.eval("answer") == 6


# ---------------------------------------------------------------- calling options directly
def test_a_jostle_option_spends_exactly_its_epsilon():
    session = _session()
    session.run(PRIOR_OPTIONS + "e = Cells(h, q, epsilon=0.25)\n")
    assert _spent(session) == Fraction(1, 4)
    assert len(session.eval("e")) == 16


def test_a_builtin_option_spends_exactly_its_epsilon_and_returns_a_vector():
    session = _session()
    session.run("e = Identity(h, q, epsilon=0.5)\n")
    assert _spent(session) == Fraction(1, 2)
    assert [c.mechanism for c in session.ledger] == ["option Identity"]
    assert np.asarray(session.eval("e")).shape == (16,)


def test_an_option_on_public_data_is_exact_and_free():
    session = _session()
    session.run("e = Identity([1, 2, 3, 4], all_ranges(4), epsilon=0.5)\n")
    assert list(session.eval("e")) == [1.0, 2.0, 3.0, 4.0]
    assert len(session.ledger) == 0


def test_a_workload_for_another_domain_is_refused():
    session = _session()
    with pytest.raises(JostleRuntimeError) as caught:
        session.run("e = Identity(h, all_ranges(8), epsilon=0.5)\n")
    assert "shape" in caught.value.message
    assert len(session.ledger) == 0


# ---------------------------------------------------------------- dispatch
def test_dispatch_by_priors_splits_the_budget_exactly():
    session = _session()
    session.run(PRIOR_OPTIONS + "choicemaker H among {Flat, Cells} informed by {zero_share} trained on none\n"
                "e = H(h, q, epsilon=0.5)\n")
    charges = [(c.mechanism, c.budget.epsilon) for c in session.ledger]
    # zero_share's one {{ }} gets the whole metafeature share (10% of 0.5); the option the rest.
    assert charges[0] == ("{{ }} geometric", Fraction(1, 20))
    assert _spent(session) == Fraction(1, 2)
    trace = session.eval("trace(H)")
    assert len(trace) == 1 and trace[0]["choice"] in ("Flat", "Cells")
    assert trace[0]["metafeature_epsilon"] == pytest.approx(0.05)
    assert trace[0]["option_epsilon"] == pytest.approx(0.45)
    # The choice follows the priors on the released metafeature.
    released = trace[0]["metafeatures"]["zero_share"]
    assert trace[0]["choice"] == ("Flat" if released < 1 - released else "Cells")
    assert "chose" in session.eval("explain(H)")


def test_a_dispatch_that_cannot_be_paid_for_spends_nothing():
    session = _session(budget=0.3)
    session.run(PRIOR_OPTIONS + "choicemaker H among {Flat, Cells} informed by {zero_share} trained on none\n")
    with pytest.raises(BudgetExceeded):
        session.run("e = H(h, q, epsilon=0.5)\n")
    assert len(session.ledger) == 0


def test_the_share_clause_sets_the_metafeature_budget():
    session = _session()
    session.run(PRIOR_OPTIONS + "choicemaker H among {Flat, Cells} informed by {zero_share} trained on none "
                "spending 0.25 on metafeatures\ne = H(h, q, epsilon=0.8)\n")
    assert session.ledger[0].budget.epsilon == Fraction(1, 5)
    assert _spent(session) == Fraction(4, 5)


def test_trained_on_none_needs_priors():
    session = _session()
    with pytest.raises(JostleRuntimeError) as caught:
        session.run("choicemaker H among {DAWA, MWEM} informed by {sparsity} trained on none\n")
    assert "priors" in caught.value.message


def test_trace_is_public_and_can_be_branched_on():
    session = _session()
    session.run(PRIOR_OPTIONS + "choicemaker H among {Flat, Cells} informed by {zero_share} trained on none\n"
                "e = H(h, q, epsilon=0.5)\nflat = trace(H)[0].choice == \"Flat\"\n")
    assert session.eval("flat") in (True, False)


def test_run_with_trace_prints_every_dispatch(tmp_path, capsys, monkeypatch):
    import jostle.cli

    monkeypatch.setenv("JOSTLE_LEDGER", ":memory:")
    rng = np.random.default_rng(1)
    pd.DataFrame({"x": rng.integers(0, 16, 300)}).to_csv(tmp_path / "t.csv", index=False)
    program = tmp_path / "p.jst"
    program.write_text('budget 1\nt = load("t.csv", {x: numeric(0, 16)})\n'
                       'h = histogram(t.bin("x", range(17)), "x")\n' + PRIOR_OPTIONS +
                       "choicemaker H among {Flat, Cells} informed by {zero_share} trained on none\n"
                       "e = H(h, all_ranges(16))\n")
    assert jostle.cli.main(["run", str(program), "--trace", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "H at " in out and "chose " in out and "budget: epsilon 1 = 0.1 on metafeatures + 0.9 on" in out


def test_profile_metafeatures_are_charged_as_one_release():
    session = _session()
    session.run(prior_options("F.profile_uniformity", "1 - F.profile_uniformity + F.sparsity") + """
choicemaker H among {Flat, Cells} informed by {profile_size, profile_uniformity, profile_entropy, sparsity} trained on none
e = H(h, q, epsilon=0.5)
""")
    charges = [(c.mechanism, c.budget.epsilon) for c in session.ledger]
    # Two budget units (the profile and sparsity) share 10% of 0.5 equally; the option gets the rest.
    assert charges[:2] == [("metafeature profile", Fraction(1, 40)), ("metafeature sparsity", Fraction(1, 40))]
    assert _spent(session) == Fraction(1, 2)
    released = session.eval("trace(H)")[0]["metafeatures"]
    assert set(released) == {"profile_size", "profile_uniformity", "profile_entropy", "sparsity"}


# ---------------------------------------------------------------- issue 11: the privacy boundary
# Hole 2: training runs the Jostle-defined options and metafeatures on the public corpus,
# uncharged; they may read only public values there. Hole 4: histogram options and
# metafeatures assume whole counts. Hole 9: the epsilon handed to an algorithm never rounds
# above the rational charged.
from jostle.language.training_boundary import TRAINING_REFUSAL, WithheldRead  # noqa: E402
from jostle.diagnostics.errors import PrivacyError  # noqa: E402


def _neighbour_sessions(rows: int = 400, **kwargs) -> tuple[Session, Session]:
    """The same program state on a table of `rows` rows and on its neighbour without the last row."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.integers(0, 16, rows)})
    sessions = []
    for data in (frame, frame.iloc[:-1]):
        session = Session(budget=1.0, seed=3, ledger_path=":memory:", **kwargs)
        session.bind_private("t", data.reset_index(drop=True), SCHEMA)
        session.bind_public("pub", pd.DataFrame({"x": np.arange(16)}), SCHEMA)
        session.run('b = t.bin("x", range(17))\nh = histogram(b, "x")\nq = all_ranges(16)\n')
        sessions.append(session)
    return sessions[0], sessions[1]


def _tiny_training(session: Session, name: str = "H") -> None:
    """Train ChoiceMaker `name` on two corpus shapes and one configuration (seconds, not minutes)."""
    from jostle.learners.histograms.corpus import default_corpus
    from jostle.learners.histograms.corpus import Corpus
    from jostle.learners.histograms.task import TrainingGrid
    from jostle.language.values import CorpusValue

    maker = session.interpreter.globals.lookup(name)  # the object itself (eval returns data only)
    maker.corpus = CorpusValue(Corpus("tiny", default_corpus(1).shapes[:2]), "tiny", task="histogram", item_name="shapes")
    maker.grid = TrainingGrid(scales=(1000,), domains_1d=(16,), epsilons=(0.5,), repetitions=1)


def _failure(session: Session, program: str) -> PrivacyError:
    with pytest.raises(PrivacyError) as caught:
        session.run(program)
    return caught.value


SPY_OPTION = """
option Spy(db, queries):
    answer:
        n = {{ count(t) }}
        return {{ db }} * (1 if n > 100 else 0)
"""


def test_hole2_an_option_reading_a_private_table_is_refused_where_it_reads_it(tmp_path, monkeypatch):
    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))
    program = SPY_OPTION + "choicemaker H among {Spy, Identity} informed by {domain_size} trained on histogram_corpus()\n"
    errors = []
    for session in _neighbour_sessions():
        error = _failure(session, program)
        assert isinstance(error, WithheldRead) and TRAINING_REFUSAL in error.message
        assert "option Spy reads 't', which is a private table" in error.message
        assert (error.span.line, error.span.column) == (4, 22) and error.hint  # the `t` of count(t)
        assert len(session.ledger) == 0
        errors.append((str(error), error.span.line, error.span.column))
    assert errors[0] == errors[1]  # the refusal is the same on neighbouring tables


def test_hole2_a_metafeature_or_helper_reading_a_private_value_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))
    for session in _neighbour_sessions():
        error = _failure(session, """
n = count(t)
def scaled(v):
    return v * n
def spy(db):
    return {{ scaled(sum(db)) }}
choicemaker H among {DAWA, Identity} informed by {spy} trained on histogram_corpus()
""")
        assert "metafeature spy (through scaled) reads 'n', which is a private value" in error.message
        assert error.span.line == 4
        assert len(session.ledger) == 0


def test_hole2_a_private_value_bound_after_construction_is_refused_at_training(tmp_path, monkeypatch):
    """The check runs again when the ChoiceMaker trains, on a copy of the environment made then."""
    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))
    errors = []
    for session in _neighbour_sessions():
        session.run("""
src = pub
option Spy(db, queries):
    answer:
        n = {{ count(src) }}
        return {{ db }} * (1 if n > 100 else 0)
choicemaker H among {Spy, Identity} informed by {domain_size} trained on histogram_corpus()
src = t
""")
        _tiny_training(session)
        error = _failure(session, "e = H(h, q, epsilon=0.5)\n")
        assert "option Spy reads 'src', which is a private table" in error.message
        assert (error.span.line, error.span.column) == (5, 22)
        assert len(session.ledger) == 0 and session.eval("trace(H)") == []
        errors.append(str(error))
    assert errors[0] == errors[1]


def test_hole2_a_read_the_text_does_not_show_is_refused_by_the_copied_environment(tmp_path, monkeypatch):
    """A module alias hides the read from the static check; the copied environment still
    withholds the module's private table, and the training run fails, the same on neighbours."""
    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path / "cache"))
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.integers(0, 16, 300)})
    errors = []
    for index, data in enumerate((frame, frame.iloc[:-1])):
        folder = tmp_path / f"run{index}"
        folder.mkdir()
        data.to_csv(folder / "secret.csv", index=False)
        (folder / "spymod.jst").write_text(f'secret = load("{folder / "secret.csv"}", {{x: numeric(0, 16)}})\n')
        session = Session(budget=1.0, seed=3, ledger_path=":memory:", search_path=[folder])
        session.bind_private("t", data.reset_index(drop=True), SCHEMA)
        session.run('import spymod\nb = t.bin("x", range(17))\nh = histogram(b, "x")\nq = all_ranges(16)\n'
                    """
option Spy(db, queries):
    answer:
        m = spymod
        n = {{ count(m.secret) }}
        return {{ db }} * (1 if n > 100 else 0)
choicemaker H among {Spy, Identity} informed by {domain_size} trained on histogram_corpus()
""")
        _tiny_training(session)
        error = _failure(session, "e = H(h, q, epsilon=0.5)\n")
        assert "'secret' is a private table" in error.message and TRAINING_REFUSAL in error.message
        assert error.span.line == 6  # the option's declaration
        assert len(session.ledger) == 0
        errors.append(str(error).replace(str(folder), "<folder>"))
    assert errors[0] == errors[1]


def test_hole2_training_code_cannot_read_files(tmp_path, monkeypatch):
    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))
    (tmp_path / "t.csv").write_text("x\n1\n2\n")
    session, _ = _neighbour_sessions()
    session.run(f"""
option Reader(db, queries):
    answer:
        n = {{{{ count(load("{tmp_path / 't.csv'}", {{x: numeric(0, 16)}})) }}}}
        return {{{{ db }}}}
choicemaker H among {{Reader, Identity}} informed by {{domain_size}} trained on histogram_corpus()
""")
    _tiny_training(session)
    error = _failure(session, "e = H(h, q, epsilon=0.5)\n")
    assert "load() reads files" in error.message
    assert len(session.ledger) == 0


PUBLIC_OPTION = """
option Scaled(db, queries):
    answer:
        return {{ db }} * k
choicemaker H among {Scaled, Identity} informed by {domain_size} trained on histogram_corpus()
"""


def test_hole2_a_public_global_is_read_and_keys_the_experience_cache(tmp_path, monkeypatch):
    """Training may read public globals; the experience is keyed by their values, so the same
    source over another value retrains instead of reusing the old experience. The public
    training is the same on neighbouring tables, and only the dispatch itself is charged."""
    from jostle.choicemaker.experience import RUN_STATS

    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))
    computed = []
    predictions = {}
    for k in (1, 3, 1):
        for session in _neighbour_sessions():
            session.run(f"k = {k}\n" + PUBLIC_OPTION)
            _tiny_training(session)
            before = RUN_STATS["pieces_computed"]
            session.run("e = H(h, q, epsilon=0.5)\n")
            computed.append(RUN_STATS["pieces_computed"] - before)
            assert _spent(session) == Fraction(1, 2)  # the chosen option: training costs nothing
            predictions.setdefault(k, []).append(session.eval("trace(H)")[0]["predicted_error"])
    # k = 1 trains, its neighbour reuses; k = 3 retrains (old code: reused k = 1's); k = 1 reuses.
    assert computed[0] > 0 and computed[1] == 0
    assert computed[2] > 0 and computed[3] == 0
    assert computed[4] == 0 and computed[5] == 0
    assert predictions[1][0] == predictions[1][1] == predictions[1][2] == predictions[1][3]
    assert predictions[3][0] == predictions[3][1] and predictions[3][0]["Scaled"] != predictions[1][0]["Scaled"]


def test_hole4_a_scaled_histogram_is_refused_by_metafeatures_options_and_choicemakers():
    """sparsity(h * 1e-12) was charged 0.1 but ran at 1e11: the count of empty cells still moves
    by one. Every histogram option and metafeature needs whole counts; a whole multiple is fine."""
    messages = []
    for session in _neighbour_sessions():
        session.run(PRIOR_OPTIONS + "choicemaker P among {Flat, Cells} informed by {zero_share} trained on none\n")
        for call in ("s = sparsity(h * 1e-12, epsilon=0.1)", "e = Identity(h * 0.5, q, epsilon=0.5)",
                     "e = DAWA(h / 3, q, epsilon=0.5)", "e = P(h * 0.5, q, epsilon=0.5)"):
            error = _failure(session, call + "\n")
            assert "whole-number counts" in error.message and "scale" in error.hint
            messages.append(str(error))
        assert len(session.ledger) == 0
        session.run("s = sparsity(h * 2, epsilon=0.1)\n")  # whole counts, l1 = 2: run at 0.05
        assert _spent(session) == Fraction(1, 10)
    assert messages[:4] == messages[4:]


def test_hole9_histogram_paths_never_run_above_the_rational_charged(monkeypatch):
    """float(1/10) is above 1/10; the algorithm gets the largest float not above epsilon / l1."""
    from jostle.learners.histograms.metafeatures import Metafeature
    from jostle.learners.histograms.options import HistogramOption

    seen = []
    run, measure = HistogramOption.run, Metafeature.measure
    monkeypatch.setattr(HistogramOption, "run", lambda self, x, eps, *a: (seen.append(eps), run(self, x, eps, *a))[1])
    monkeypatch.setattr(Metafeature, "measure", lambda self, x, eps, *a: (seen.append(eps), measure(self, x, eps, *a))[1])
    session = _session()
    session.run("e = Identity(h, q, epsilon=0.1)\ns = sparsity(h, epsilon=0.1)\n"
                "e3 = Identity(h + h + h, q, epsilon=0.1)\n")
    assert len(seen) == 3
    assert Fraction(seen[0]) <= Fraction(1, 10) and Fraction(seen[1]) <= Fraction(1, 10)
    assert Fraction(seen[2]) <= Fraction(1, 30)
    assert Fraction(1, 10) - Fraction(seen[0]) < Fraction(1, 10**16)  # and no lower than it must be


def test_zeros_of_a_list_that_is_not_numbers_is_a_located_error():
    """Found by the neighbour fuzzer: zeros(t.columns) raised a bare ValueError (exit 70)."""
    import io

    import pandas as pd

    from jostle import Session
    from jostle.diagnostics.errors import JostleRuntimeError

    session = Session(budget=1, ledger_path=":memory:", output=io.StringIO())
    session.bind_private("t", pd.DataFrame({"a": ["x"]}), {"a": ("categorical", ["x", "y"])})
    with pytest.raises(JostleRuntimeError, match="list of numbers"):
        session.run("print(zeros(t.columns))")


def test_an_option_refuses_a_histogram_of_the_wrong_dimension_before_charging():
    """UGrid on a 1D histogram charged the budget, then failed with exit 70 (found by an
    adversarial review): the dimension is public and is checked first."""
    import io

    import pandas as pd

    from jostle import Session
    from jostle.diagnostics.errors import JostleRuntimeError

    session = Session(budget=3, seed=1, ledger_path=":memory:", output=io.StringIO())
    session.bind_private("t", pd.DataFrame({"c": ["a", "b"]}), {"c": ("categorical", ["a", "b"])})
    for option in ("UGrid", "AGrid"):
        with pytest.raises(JostleRuntimeError, match="defined for 2D histograms"):
            session.run(f'x = {option}(histogram(t, "c"), all_ranges(2), epsilon=1)')
    assert len(session.ledger) == 0


def test_whole_counts_beyond_the_doubles_are_clamped_before_an_option_reads_them():
    """Counts are held exactly; a cell above 2^52 would round when turned into a double, by
    more than the unit steps group privacy allows. Cells are clamped to +-2^52 (1-Lipschitz)."""
    from jostle.learners.histograms.language import FLOAT_EXACT_WHOLE, histogram_data
    from jostle.diagnostics.source import BUILTIN_SPAN
    from jostle.language.values import Private

    value = np.asarray([3, 2 ** 60 + 1, -(2 ** 60)], dtype=object)
    private = Private(value, 2.0, 2.0, BUILTIN_SPAN, "h", None, integer=True)
    counts, l1, _, is_private = histogram_data(private, BUILTIN_SPAN, "test")
    assert is_private and l1 == 2.0
    assert counts.tolist() == [3.0, float(FLOAT_EXACT_WHOLE), -float(FLOAT_EXACT_WHOLE)]


def test_the_docs_explain_sample_is_the_real_output(tmp_path, monkeypatch):
    """docs/language.md shows what `jostle run examples/choicemaker.jst --seed 1` really prints
    (the ChoiceMaker ships pre-trained, so this runs in seconds; regenerate the block when the
    algorithms or the shipped models change)."""
    import contextlib
    import io
    import re
    from pathlib import Path

    from jostle import cli

    root = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("JOSTLE_CACHE", str(tmp_path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["run", str(root / "examples" / "choicemaker.jst"), "--seed", "1", "--ledger-db", ":memory:"])
    assert code == 0
    printed = out.getvalue()
    real = printed[printed.index("H at "):printed.index("chosen:")].rstrip("\n")
    real = real.replace(str(root / "examples") + "/", "examples/")
    docs = (root / "docs" / "language.md").read_text()
    sample = re.search(r"<!-- explain-sample -->\n```text\n(.*?)\n```", docs, re.S).group(1)
    assert sample == real
