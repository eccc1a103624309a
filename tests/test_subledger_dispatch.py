"""Negative controls of the one guard through a whole dispatch: a family's Option whose learner is
made to overspend is refused, with the one over-budget error, before it draws past its charge."""

from __future__ import annotations

import pytest

from jostle.privacy.subledger import OverBudgetError


@pytest.mark.parametrize("family_module", ["jostle.learners.trees.family", "jostle.learners.brl.family"])
def test_a_dispatched_option_whose_learner_overspends_raises_the_one_class(family_module: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Negative control through the whole dispatch: the Option's learner is made to run at twice
    the epsilon its Option was charged; the family's guard refuses before the learner draws past it."""
    import importlib

    from jostle.privacy.noise import Randomness

    dispatch_module = importlib.import_module("jostle.choicemaker.private_dispatch")
    family = importlib.import_module(family_module).FAMILY
    data, _ = family.neighbouring_inputs(0)
    option = next(iter(family.options().values()))
    honest = type(option).fit

    def greedy(self: object, data: object, epsilon: object, *rest: object, **keywords: object) -> object:
        return honest(self, data, 2 * epsilon, *rest, **keywords)  # type: ignore[operator]

    class Prior(dispatch_module.Runtime):  # type: ignore[name-defined,misc]
        def priors(self, features: object) -> dict[str, float]:
            return {option.name: 0.0}

    spec = dispatch_module.ChoiceSpec(family, {option.name: option}, [], 0.0)
    charged: list[tuple[object, str]] = []
    result = dispatch_module.dispatch(spec, data, 1.0, runtime=Prior(family, Randomness(3),
                                                                     lambda c, d: charged.append((c, d))))
    assert result.choice == option.name and len(charged) == 1  # the honest Option runs within its charge
    monkeypatch.setattr(type(option), "fit", greedy)
    with pytest.raises(OverBudgetError):
        dispatch_module.dispatch(spec, data, 1.0, runtime=Prior(family, Randomness(3)))
