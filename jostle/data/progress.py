"""Progress on stderr for the steps of binding data that can take long (reading, fingerprinting,
conformance), shown only where a person watches and only once a step has run two seconds.

The bar is tqdm's (the one the ChoiceMaker's training already shows, jostle.choicemaker.experience).
It appears only when stderr is a terminal and after `DELAY` seconds, so quick steps, pipes, CI logs
and tests stay silent; `JOSTLE_PROGRESS=0` silences it, `JOSTLE_PROGRESS=1` shows it even when
stderr is not a terminal (still after the delay).

What a bar counts is public: the steps of a job (the columns of a table, whose names the schema
and the header give, and the stages of a binding), never rows or bytes. A program's author who
watches the terminal of a run learns nothing from it beyond the time a step takes, which is
outside what the privacy standard covers (docs/threat_model.md: timing), and no bar is ever
written to stdout, where a program's output goes (DuckDB's own progress bar, which printed there,
is off: jostle.data.engine.duckdb_engine).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

ENV_VAR = "JOSTLE_PROGRESS"
DELAY = 2.0  # seconds a step runs before its bar appears


def enabled() -> bool:
    """Whether progress may be shown: `JOSTLE_PROGRESS` if set ("0" off, anything else on), else
    whether stderr is a terminal."""
    setting = os.environ.get(ENV_VAR)
    if setting is not None and setting.strip() != "":
        return setting.strip() not in ("0", "false", "no", "off")
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


class Steps:
    """A bar over the public steps of one job; a no-op when progress is off.

    Use as a context manager: `with Steps("fingerprint of 't'", total=15, unit="column") as bar:
    ...; bar.advance()`.
    """

    def __init__(self, description: str, total: int | None, unit: str = "step", delay: float = DELAY) -> None:
        self._bar: Any = None
        self._done = threading.Event()
        self._ticker: threading.Thread | None = None
        if enabled():
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=description, unit=unit, delay=delay, file=sys.stderr, leave=False)
            # One step may be one long query (a CSV parsed, a table conformed): once the delay has
            # passed, the bar is redrawn twice a second so its elapsed time moves meanwhile.
            self._ticker = threading.Thread(target=self._tick, args=(delay,), daemon=True)
            self._ticker.start()

    def _tick(self, delay: float) -> None:
        if self._done.wait(delay):
            return
        while not self._done.wait(0.5):
            bar = self._bar
            if bar is not None:
                bar.refresh()

    @property
    def shown(self) -> bool:
        """Whether a bar exists (it may still be waiting out its delay)."""
        return self._bar is not None

    def advance(self, steps: int = 1, note: str | None = None) -> None:
        """Count `steps` more steps done, with an optional public note (e.g. the next column)."""
        if self._bar is not None:
            if note is not None:
                self._bar.set_postfix_str(note, refresh=False)
            self._bar.update(steps)

    def close(self) -> None:
        self._done.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Steps:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Steps", "enabled", "ENV_VAR", "DELAY"]
