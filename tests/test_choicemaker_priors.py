"""A ChoiceMaker option's `predict(F)` prior is refused before anything is charged (issue 21).

The engine calls the priors after the metafeature share is charged (they read the released
metafeatures F). A prior holding a release (`F.sparsity + {{ count(t) }} * 0`) used to run then
and be refused: a refusal after a charge, the share spent for nothing. Now a prior is
post-processing by construction (jostle/language/training_boundary.py, `check_prior`): a release
written in it is refused when the option is built, and a read of a private value or of a file
(through the functions it calls, locals included) when the ChoiceMaker is built and again when
it is called, before the dispatch charges anything. Each refusal is located in the program.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jostle import Session
from jostle.diagnostics.errors import PrivacyError

HEAD = """ages = t.bin("age", range(0, 101, 10))
h = histogram(ages, "age")
q = all_ranges(10)
"""

CELLS = """
option Cells(db, queries):
    answer:
        return {{ db }}
    predict(F):
        return 1 - F.sparsity
"""


def _flat(prior: str) -> str:
    return ("\noption Flat(db, queries):\n    answer:\n        n = {{ sum(db) }}\n"
            "        return map(lambda i: n / 10, range(10))\n    predict(F):\n" + prior)


CHOOSE = "\nchoicemaker H among {Flat, Cells} informed by {sparsity} trained on none\n"
CALL = "with budget 1:\n    estimate = H(h, q)\n"


def _session() -> Session:
    rng = np.random.default_rng(0)
    session = Session(budget=10, seed=1, ledger_path=":memory:")
    session.bind_private("t", pd.DataFrame({"age": rng.integers(0, 100, 300)}), {"age": ("numeric", 0, 100)})
    return session


def _refused(session: Session, source: str, filename: str = "prog.jst") -> PrivacyError:
    with pytest.raises(PrivacyError) as caught:
        session.run(source, filename)
    return caught.value


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.split("\n"), 1) if text in line)


def _assert_nothing_charged(session: Session) -> None:
    assert len(session.ledger) == 0
    assert session.session_spent.epsilon == 0


def test_issue21_a_release_in_a_prior_is_refused_before_anything_is_charged() -> None:
    """The reproducer: refused at the option, located at the `{{ }}` in the prior, ledger empty."""
    source = HEAD + _flat("        return F.sparsity + {{ count(t) }} * 0\n") + CELLS + CHOOSE + CALL
    session = _session()
    error = _refused(session, source)
    _assert_nothing_charged(session)
    assert "prior cannot release" in error.message
    assert (error.span.line, error.span.column) == (_line_of(source, "{{ count(t) }}"),
                                                    source.split("\n")[_line_of(source, "{{ count(t) }}") - 1]
                                                    .index("{{") + 1)


def test_a_release_reached_through_a_function_the_prior_calls_is_refused_when_the_choicemaker_is_built() -> None:
    source = (HEAD + "def g():\n    return {{ count(t) }}\n" + _flat("        return F.sparsity + g() * 0\n")
              + CELLS + CHOOSE + CALL)
    session = _session()
    error = _refused(session, source)
    _assert_nothing_charged(session)
    assert "option Flat's predict(F) prior (through g) reads 't', which is a private table" in error.message
    assert error.span.line == _line_of(source, "return {{ count(t) }}")


def test_a_global_rebound_to_private_data_after_the_build_is_refused_at_the_call_before_any_charge() -> None:
    source = (HEAD + "k = 0\n" + _flat("        return F.sparsity + k\n") + CELLS + CHOOSE
              + "k = count(t)\n" + CALL)
    session = _session()
    error = _refused(session, source)
    _assert_nothing_charged(session)
    assert "reads 'k', which is a private value" in error.message
    assert error.span.line == _line_of(source, "return F.sparsity + k")


def test_a_local_that_can_fall_through_to_a_private_global_is_refused() -> None:
    """A local assigned on one path only reads the global of its name on the other: refused in
    the text (the check treats every local read as a possible read of the scope)."""
    prior = "        if F.sparsity > 2:\n            n = 1\n        return n\n"
    source = HEAD + "n = count(t)\n" + _flat(prior) + CELLS + CHOOSE + CALL
    session = _session()
    error = _refused(session, source)
    _assert_nothing_charged(session)
    assert "reads 'n', which is a private value" in error.message


def test_a_prior_that_reads_a_file_is_refused_when_the_choicemaker_is_built(tmp_path) -> None:
    (tmp_path / "x.csv").write_text("a\n1\n")
    source = HEAD + _flat('        return F.sparsity + len(load_public("x.csv"))\n') + CELLS + CHOOSE + CALL
    session = _session()
    error = _refused(session, source, str(tmp_path / "prog.jst"))
    _assert_nothing_charged(session)
    assert "reads 'load_public', which is a built-in that reads files" in error.message


def test_priors_that_post_process_f_still_choose_print_and_may_read_public_globals() -> None:
    """What a prior may do is unchanged: read F and public globals, call functions, print."""
    source = (HEAD + "w = 2\ndef half(x):\n    return x / w\n"
              + _flat('        print("prior of Flat")\n        return half(F.sparsity) + laplace(w, 1) * 0\n')
              + CELLS + CHOOSE + CALL + "print(trace(H)[0].choice)\n")
    session = _session()
    output = []
    session.interpreter.output = type("Out", (), {"write": lambda self, text: output.append(text)})()
    session.run(source, "prog.jst")
    text = "".join(output)
    assert text.startswith("prior of Flat\n") and text.rstrip().split("\n")[-1] in ("Flat", "Cells")
    assert [c.mechanism for c in session.ledger][0] == "metafeature sparsity"
    assert session.session_spent.epsilon == 1
