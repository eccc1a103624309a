"""Public limits on the size of one row's values, shared by every route a row function takes.

The language keeps them on the in-memory route (jostle.language.row_limits, which has the rule
and its argument: a row whose result is beyond a limit takes the missing value); the engines'
compiler (jostle.data.engine.expressions) compiles a row function only where no row can reach
them, so both routes give the same rows. The constant lives here, below both, because the data
layer may not import the language (the layer contract in pyproject.toml).
"""

from __future__ import annotations

# Characters in one row's text inside a row function (Python's len: code points). Public texts
# may be longer; see jostle.language.row_limits for why a row's texts are kept this small.
MAX_ROW_TEXT = 10_000

__all__ = ["MAX_ROW_TEXT"]
