"""The Jostle language: parser, AST, checker, evaluator, operators, values, sensitivity rules, private primitives, built-ins, tables and the ChoiceMaker as a language value."""
