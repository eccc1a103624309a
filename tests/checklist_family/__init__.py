"""A learner family written from the checklist of docs/architecture.md alone, as an outsider would.

The task: the median of integer values in a public domain [0, D) (privacy unit: one value
added or removed). Two Options release a noisy histogram and read its median; a ChoiceMaker
learns which histogram (every value, or eight coarse bins) does better on which input. The
family lives outside `jostle/` (so it is not discovered: it is trained and checked by passing
it in), and `tests/test_checklist_family.py` runs the shipped conformance checks on it in one
call. Modules: `task` (the input and the public training tasks), `corpus`, `options`,
`metafeatures`, `family` (`FAMILY`).
"""
