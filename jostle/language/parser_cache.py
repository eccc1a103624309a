"""The built LALR parser of the grammar, kept on disk so that start-up does not rebuild it.

Building lark's LALR tables from grammar/jostle.lark takes about 0.1 s, a fifth of what
`jostle -c 'print(1)'` may cost. The first process to build the tables writes them to
`$JOSTLE_CACHE/parser/` (default `~/.cache/jostle/parser/`, the ChoiceMaker caches' folder)
and every later process loads them in about 0.01 s.

The file is named by a hash of everything the tables depend on: the grammar text, the lark
options, lark's version and Python's version. It holds the tables as `marshal` data (dicts,
lists, tuples, strings, numbers: no pickle, so loading it cannot run code), after a header
line with that hash and the SHA-256 of the data. A file whose header does not match, or
that does not load, is ignored and replaced: the cache can only make the parser faster,
never different. Writes go to a temporary file renamed into place, so processes that start
together never read a half-written file. Nothing is ever read from the network.

The tables are lark's own serialisation (`Lark.memo_serialize`, loaded back by the loader
lark's `cache=` option uses); if a future lark changes it, loading fails and the parser is
built as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import lark
from lark import Lark

FORMAT = "jostle-parser/1"
SUFFIX = ".marshal"


def cache_dir() -> Path:
    """`$JOSTLE_CACHE/parser`, else `~/.cache/jostle/parser`."""
    base = os.environ.get("JOSTLE_CACHE") or Path.home() / ".cache" / "jostle"
    return Path(base) / "parser"


def cache_key(grammar: str, options: dict[str, Any], load_options: dict[str, Any]) -> str:
    """The hash of everything the built tables depend on (hex SHA-256).

    Args:
        grammar: The grammar text.
        options: The lark options stored with the tables.
        load_options: The options given again at load. A postlex object enters by its class
            and the token types it always accepts, which decide the terminals lark keeps.
    """
    def describe(value: Any) -> str:
        if value is None or isinstance(value, (bool, int, float, str)):
            return repr(value)
        kind = type(value)
        return f"{kind.__module__}.{kind.__qualname__}:{getattr(value, 'always_accept', None)!r}"

    described = sorted((name, describe(value)) for name, value in load_options.items())
    parts = [FORMAT, grammar, repr(sorted(options.items())), repr(described), lark.__version__, sys.version]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def cache_path(key: str) -> Path:
    """The file that holds (or will hold) the tables with this `cache_key`."""
    return cache_dir() / f"jostle-{key[:32]}{SUFFIX}"


def _serialize(parser: Lark, exclude: set[str]) -> bytes:
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {name: value for name, value in data["options"].items() if name not in exclude}
    return marshal.dumps({"data": data, "memo": memo})


def _header(key: str, payload: bytes) -> bytes:
    return f"{FORMAT} {key} {hashlib.sha256(payload).hexdigest()}\n".encode("ascii")


def load(path: Path, key: str, load_options: dict[str, Any]) -> Lark | None:
    """The parser stored at `path`, or None when there is none or it is not the one asked for.

    Args:
        path: The cache file.
        key: The expected `cache_key`.
        load_options: The options lark takes again at load (e.g. `postlex`).
    """
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    header, _, payload = blob.partition(b"\n")
    if header + b"\n" != _header(key, payload):
        return None
    try:
        data = marshal.loads(payload)
        if not (isinstance(data, dict) and isinstance(data.get("data"), dict) and isinstance(data.get("memo"), dict)):
            return None
        return Lark.__new__(Lark)._load(data, **load_options)
    except Exception:  # a lark whose serialisation changed: build instead
        return None


def store(parser: Lark, path: Path, key: str, exclude: set[str]) -> bool:
    """Write the tables of `parser` to `path` atomically; False when they could not be written.

    Args:
        parser: The built parser.
        path: The cache file.
        key: Its `cache_key`.
        exclude: The option names left out of the file (those given again at load).
    """
    try:
        payload = _serialize(parser, exclude)
    except Exception:  # a lark whose serialisation changed (or holds something marshal cannot)
        return False
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=SUFFIX)
        with os.fdopen(handle, "wb") as file:
            file.write(_header(key, payload) + payload)
        os.replace(temporary, path)
    except OSError:  # a read-only or missing home: the parser is simply built each time
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        return False
    return True


def cached_lark(grammar: str, options: dict[str, Any], load_options: dict[str, Any]) -> Lark:
    """`Lark(grammar, **options, **load_options)`, loaded from the cache when it is there.

    Args:
        grammar: The grammar text.
        options: Lark options stored with the tables (they must not name a load option).
        load_options: Options given again at load; lark allows only `postlex`, `transformer`,
            `lexer_callbacks`, `propagate_positions`, `tree_class` and a few more here.
    """
    key = cache_key(grammar, options, load_options)
    try:
        path: Path | None = cache_path(key)
    except RuntimeError:  # no home directory to cache in
        path = None
    if path is not None:
        parser = load(path, key, load_options)
        if parser is not None:
            return parser
    parser = Lark(grammar, **options, **load_options)
    if path is not None:
        store(parser, path, key, set(load_options) | {"postlex", "transformer", "lexer_callbacks",
                                                      "tree_class", "_plugins"})
    return parser
