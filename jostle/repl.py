"""The interactive prompt, built on `code.InteractiveConsole` (as Hy's REPL is).

Inputs run in one Session, so names and spent budget persist between them. A line ending
in ':' opens a block that ends at an empty line; open brackets continue onto the next line.
Errors are shown with carets and the session survives them. Commands: :budget, :ledger,
:help, :quit; the built-in `help()` lists the built-ins (jostle.language.builtin_help). History is kept in ~/.jostle_history (or $JOSTLE_HISTORY).

Spending is recorded in the session's durable budget ledger (jostle.privacy.ledger_store) as it
happens, so a restarted REPL on the same data continues from what was spent; the banner names
the ledger, and :budget says how much of the spending came from earlier sessions.
"""

from __future__ import annotations

import code
import os
import sys
import traceback
from pathlib import Path

from jostle.diagnostics.errors import JostleError
from jostle.session import Session

BANNER = """Jostle {version}: differentially private programs. Type :help for help, :quit to leave.
{budget}
budget ledger: {ledger}"""

HELP = """Statements and expressions run as you type them; names persist between inputs.
A line ending in ':' starts a block; finish it with an empty line.

  :budget   the total budget, what is spent (also by earlier sessions) and what remains
  :ledger   every charge of this session: where, mechanism, epsilon, delta, data
  :help     this text
  :quit     leave (or Ctrl-D)

help() lists the built-in functions by kind, one line each; help(count) or help("count")
shows one of them.

Private values are shown only by what is public about them; release them with
laplace(x, eps), geometric(x, eps), gaussian(x, eps, delta) or {{ x }} inside `with budget E:`."""

PS1 = "jostle> "
PS2 = "...     "


def _open_brackets(source: str) -> int:
    """How many brackets are still open, ignoring strings and comments."""
    depth, quote, escaped = 0, "", False
    for line in source.splitlines():
        for char in line:
            if quote:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == quote:
                    quote = ""
                continue
            if char == "#":
                break
            if char in "\"'":
                quote = char
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
        quote = ""
    return depth


class JostleConsole(code.InteractiveConsole):
    """An InteractiveConsole whose inputs are Jostle, run in one Session."""

    def __init__(self, session: Session) -> None:
        super().__init__(filename="<repl>")
        self.session = session
        self.counter = 0
        self.done = False

    # code.InteractiveConsole calls this with the whole buffered input.
    def runsource(self, source: str, filename: str = "<repl>", symbol: str = "single") -> bool:
        lines = source.split("\n")
        stripped = source.strip()
        if not stripped:
            return False
        if _open_brackets(source) > 0 or source.rstrip().endswith("\\"):
            return True
        first = lines[0].split("#", 1)[0].rstrip()
        if first.endswith(":") and lines[-1].strip() != "":
            return True  # a block: wait for the empty line that ends it
        self.counter += 1
        self.execute(source, f"<repl {self.counter}>")
        return False

    def execute(self, source: str, name: str) -> None:
        from jostle.language.checker import check
        from jostle.language.parser import parse
        from jostle.language.values import format_value

        session = self.session
        interp = session.interpreter
        try:
            program = parse(source, name)
            check(program, interp.builtins.values, session._known(), interp.bindings)
            value = interp.run_program(program)
            if value is not None and type(program.body[-1]).__name__ == "ExprStmt":
                interp.write((interp.vector_labels.text(value) or format_value(value)) + "\n")
        except JostleError as error:
            sys.stdout.flush()
            self.write(error.render() + "\n")
        except KeyboardInterrupt:
            self.write("interrupted\n")
        except BrokenPipeError:  # no one reads the output any more: jostle.cli ends quietly
            raise
        except Exception as error:  # a bug: say so, keep the session
            self.write(f"internal error: {type(error).__name__}: {error}\n"
                       "This is a bug in Jostle; please report it with this traceback:\n")
            self.write("".join(traceback.format_exception(error)))

    def push(self, line: str, filename: str | None = None, _symbol: str | None = None) -> bool:
        if not self.buffer and line.strip().startswith(":"):
            self.command(line.strip())
            return False
        return super().push(line)

    def command(self, text: str) -> None:
        from jostle.language.builtins import describe_budget

        word = text.split()[0]
        out = self.session.interpreter.write
        if word in (":quit", ":q", ":exit"):
            self.done = True
            raise SystemExit(0)
        if word == ":budget":
            out(describe_budget(self.session.interpreter) + "\n")
        elif word == ":ledger":
            out(str(self.session.ledger) + "\n")
        elif word == ":help":
            out(HELP + "\n")
        else:
            self.write(f"unknown command {word}; try :help\n")

    def write(self, data: str) -> None:
        sys.stderr.write(data)


def _setup_history() -> None:
    try:
        import atexit
        import readline
    except ImportError:  # pragma: no cover - no readline on this platform
        return
    path = Path(os.environ.get("JOSTLE_HISTORY", Path.home() / ".jostle_history"))
    try:
        readline.read_history_file(path)
    except OSError:
        pass
    readline.set_history_length(2000)

    def save() -> None:
        try:
            readline.write_history_file(path)
        except OSError:
            pass

    atexit.register(save)


def run_repl(session: Session) -> int:
    """Run the prompt until :quit or end of input; returns the exit code."""
    from jostle import __version__
    from jostle.language.builtins import describe_budget

    if sys.stdin.isatty():
        _setup_history()
    console = JostleConsole(session)
    saved = getattr(sys, "ps1", None), getattr(sys, "ps2", None)
    sys.ps1, sys.ps2 = PS1, PS2
    store = session.store
    ledger = (f"{store.path} (what is spent here persists)" if store.persistent
              else "in memory (nothing persists after this session)")
    banner = BANNER.format(version=__version__, budget=describe_budget(session.interpreter), ledger=ledger)
    try:
        console.interact(banner=banner, exitmsg="")
    except SystemExit as stop:
        return int(stop.code or 0)
    finally:
        if saved[0] is None:
            del sys.ps1
        else:
            sys.ps1 = saved[0]
        if saved[1] is None:
            del sys.ps2
        else:
            sys.ps2 = saved[1]
    return 0
