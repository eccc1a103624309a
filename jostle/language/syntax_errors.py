"""Syntax errors that say what went wrong and where: lark's errors (an unexpected character,
token or end of input, a dedent to no block) turned into located `JostleSyntaxError`s with a
hint, such as the bracket left open or the keyword used as a name.

Also here: the language's keywords (`KEYWORDS`), which the hints and `Session` name checks use.
"""

from __future__ import annotations

import re

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from jostle.diagnostics.errors import JostleSyntaxError
from jostle.diagnostics.render import source_line
from jostle.diagnostics.source import Source, Span


class IndentMismatch(Exception):
    """A line dedents to a column that no enclosing block starts at (lark's DedentError)."""

    def __init__(self, token: Token, indent: int, levels: list[int]) -> None:
        super().__init__("inconsistent dedent")
        self.token = token
        self.indent = indent
        self.levels = levels


KEYWORDS = frozenset(
    "if elif else while for in def return lambda with budget import private pass break "
    "continue and or not true false none option choicemaker".split()
)
# Words that are keywords only where the grammar expects them (they remain usable as names):
# accuracy, at (after `with`: `with accuracy E at C:`), answer, predict (inside an option), among, informed, by, trained, on, measured, spending,
# metafeatures (inside a choicemaker).

# What a person most likely meant when lark expected one of these and found something else.
_TOKEN_WORDS = {
    "_NL": "a new line",
    "_INDENT": "an indented block",
    "_DEDENT": "the end of the block",
    "$END": "the end of the input",
    "COLON": "':'",
    "RPAR": "')'",
    "RSQB": "']'",
    "RBRACE": "'}'",
    "LPAR": "'('",
    "NAME": "a name",
    "EQUAL": "'='",
    "COMMA": "','",
    "LBRACE": "'{'",
    "LSQB": "'['",
    "MINUS": "'-'",
    "PLUS": "'+'",
    "NUMBER": "a number",
    "STRING": "a string",
    "TRUE": "true",
    "FALSE": "false",
    "NONE": "none",
    "LAMBDA": "lambda",
    "NOT": "not",
    "DOT": "'.'",
    "IN": "in",
}


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "end of input"
    if token.type == "_NL":
        return "end of line"
    if token.type == "_INDENT":
        return "indent"
    if token.type == "_DEDENT":
        return "end of an indented block"
    return repr(str(token))


def _code_length(text: str) -> int:
    """How many characters of a line are code: up to a comment (outside strings), less trailing blanks."""
    quote: str | None = None
    i = 0
    while i < len(text):
        char = text[i]
        if quote is not None:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "#":
            return len(text[:i].rstrip())
        i += 1
    return len(text.rstrip())


def span_at(source: Source, line: int | None, column: int | None, width: int = 1) -> Span:
    if line is None or line < 1:  # the end of the input: just past the last code, not a comment
        lines = [text.rstrip("\r") for text in source.text.split("\n")]  # as lark counts lines
        line = max((i for i, text in enumerate(lines, 1) if _code_length(text)), default=1)
        column = _code_length(lines[line - 1]) + 1
    column = column or 1
    return Span(source, line, column, line, column + max(1, width))


def _next_code_line(source: Source, position: int, line: int) -> tuple[int, int]:
    """Line and column of the first code after `position` (an indent token's newline)."""
    rest = source.text[position:].split("\n")
    for offset, text in enumerate(rest[1:], start=1):
        stripped = text.lstrip(" \t")
        if stripped and not stripped.startswith("#"):
            return line + offset, len(text) - len(stripped) + 1
    return line, 1


_OPENERS = {"(": ")", "[": "]", "{": "}"}
_BLOCK_KEYWORDS = ("if", "elif", "else", "while", "for", "def", "with")


def _unclosed_bracket(source: Source, stop: int) -> tuple[int, int] | None:
    """Line and column of the innermost bracket opened before offset `stop` and not closed.

    Strings and comments are skipped, so brackets inside them do not count.
    """
    text = source.text[:stop]
    stack: list[tuple[str, int, int]] = []
    line, column, i = 1, 1, 0
    quote: str | None = None
    while i < len(text):
        char = text[i]
        if quote is not None:
            if char == "\\":
                i, column = i + 2, column + 2
                continue
            if char == quote or char == "\n":
                quote = None
        elif char == "#":
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            column += end - i
            i = end
            continue
        elif char in "\"'":
            quote = char
        elif char in _OPENERS:
            stack.append((char, line, column))
        elif char in ")]}" and stack and _OPENERS[stack[-1][0]] == char:
            stack.pop()
        if char == "\n":
            line, column = line + 1, 1
        else:
            column += 1
        i += 1
    return (stack[-1][1], stack[-1][2]) if stack else None


def _slicing(source: Source, stop: int) -> bool:
    """Whether offset `stop` (a ':') is inside an index bracket, as in Python's `x[1:3]`.

    True when the innermost bracket still open there is a '[' that follows a name, a closing
    bracket or a string, so it indexes something (a list literal `[a: b]` is not a slice).
    """
    opened = _unclosed_bracket(source, stop)
    if opened is None:
        return False
    line_text = source_line(source, opened[0])
    column = opened[1] - 1
    if column >= len(line_text) or line_text[column] != "[":
        return False
    before = line_text[:column].rstrip()
    return bool(before) and (before[-1].isalnum() or before[-1] in "_)]}\"'")


def _open_header(source: Source, line: int | None) -> tuple[int, str] | None:
    """The block header (`def f(x):`, `if c:`, ...) whose body should start at `line` but does not.

    Returns the header's line number and its text when the last code line before `line` (the
    end of the input when `line` is None) is such a header and `line` is not indented under it,
    so the block it opens has no body. Comment and blank lines do not count as a body.
    """
    lines = source.text.split("\n")
    stop = len(lines) if line is None else line - 1
    for number in range(stop, 0, -1):
        text = lines[number - 1].rstrip("\r")
        code = text[:_code_length(text)]
        if not code.strip():
            continue
        if not (code.endswith(":") and _HEADER.match(code.lstrip())):
            return None
        if line is not None:
            body = lines[line - 1]
            if len(body) - len(body.lstrip(" ")) > len(code) - len(code.lstrip(" ")):
                return None  # indented under the header: some other mistake
        return number, code.strip()
    return None


_HEADER = re.compile(r"(if|elif|else|while|for|def|with)\b")


def _empty_body(source: Source, header: tuple[int, str], where: Span, at_end: bool = False) -> JostleSyntaxError:
    """The error for a block header followed by no indented body (`def f(x):` then a dedented line)."""
    number, text = header
    kind = "function" if text.startswith("def") else "block"
    indent = len(source_line(source, number)) - len(source_line(source, number).lstrip(" "))
    return JostleSyntaxError(
        f"the body of `{text}` is empty: " + ("the input ends after it" if at_end else
                                              "the next line is not indented under it"), where,
        f"indent the {kind}'s statements under it (for example {indent + 4} spaces, 4 more than the header); "
        f"a {kind} that does nothing is written with the body `pass`",
        [(f"the {kind} starts here", Span(source, number, indent + 1, number, indent + 1 + len(text)))])


def syntax_error(error: UnexpectedInput, source: Source) -> JostleSyntaxError:
    if isinstance(error, UnexpectedCharacters):
        char = source.text[error.pos_in_stream] if error.pos_in_stream < len(source.text) else ""
        hint = None
        if char in "\"'":
            hint = "strings must open and close on the same line"
        elif char == "\t":
            hint = "indent with spaces"
        return JostleSyntaxError(
            f"unexpected character {char!r}", span_at(source, error.line, error.column), hint
        )
    if isinstance(error, UnexpectedEOF):
        opened = _unclosed_bracket(source, len(source.text))
        if opened is not None:
            return JostleSyntaxError("a bracket is not closed", span_at(source, *opened),
                                     "close it before the end of the input")
        header = _open_header(source, None)
        if header is not None:
            return _empty_body(source, header, span_at(source, None, None), at_end=True)
        return JostleSyntaxError(
            "unexpected end of input",
            span_at(source, None, None),
            "a string or block is not closed",
        )
    assert isinstance(error, UnexpectedToken)
    token = error.token
    expected = sorted(error.expected)
    at_end = token.type == "$END" or getattr(token, "start_pos", None) is None
    stop = len(source.text) if at_end else token.start_pos
    opened = _unclosed_bracket(source, stop)
    line = getattr(token, "line", None)
    closes = any(t in expected for t in ("RPAR", "RSQB", "RBRACE"))
    if opened is not None and ((at_end and closes) or (not at_end and line is not None and opened[0] < line)):
        # A bracket left open on an earlier line swallows the newline: whatever follows looks
        # like a continuation, so the true cause is the bracket, and the caret goes there at
        # the end of the input, or to the first token that cannot continue the expression.
        where = span_at(source, *opened) if at_end else span_at(source, line, token.column, len(str(token)))
        notes = [] if at_end else [("the bracket opened here is not closed", span_at(source, *opened))]
        return JostleSyntaxError("a bracket is not closed", where, "close the bracket on the line where the "
                                 "expression ends", notes)
    if token.type == "COLON" and _slicing(source, stop):
        return JostleSyntaxError(
            "Jostle has no slicing: `x[a:b]` is not an expression",
            span_at(source, line, token.column, 1),
            "take one item with x[i]; for the items a to b-1 write map(lambda i: x[i], range(a, b))")
    empty = _open_header(source, None if at_end else line) if token.type not in ("_INDENT", "_NL") else None
    if empty is not None:
        where = span_at(source, None, None) if at_end else span_at(source, line, token.column, len(str(token)))
        if token.type == "_DEDENT" and not at_end and getattr(token, "start_pos", None) is not None:
            where = span_at(source, *_next_code_line(source, token.start_pos, line))
        return _empty_body(source, empty, where, at_end)
    hint = None
    header = source_line(source, line).lstrip() if line is not None else ""
    if token.type == "_INDENT":
        hint = "this line is indented more than the block it is in"
    elif header.startswith("with accuracy") and token.type not in ("_NL", "$END"):
        hint = ("an accuracy block reads `with accuracy E at C:`: E the target error (a half-width in the "
                "value's units), C the confidence in (0, 1), e.g. `with accuracy 10 at 0.95:`")
    elif str(token) in KEYWORDS and token.type not in ("_NL", "$END"):
        hint = f"'{token}' is a keyword: it cannot name a variable, function or parameter, nor stand for a value"
    elif token.type == "EQUAL":
        hint = "to define a function write `def f(x):`; to set a field build a new record"
    elif "COLON" in expected and header.split("(")[0].split(" ")[0] in _BLOCK_KEYWORDS:
        hint = "a block header (if, for, while, def, with) ends with ':'"
    elif token.type in ("_NL", "$END") and any(t in expected for t in ("RPAR", "RSQB", "RBRACE")):
        hint = "a bracket is not closed"
    elif token.type in ("_NL", "$END") and ("NAME" in expected or "NUMBER" in expected):
        hint = "the expression is not finished"
    else:
        words = [_TOKEN_WORDS.get(t, t.lower()) for t in expected[:6]]
        if words:
            hint = "expected " + ", ".join(words)
    column = getattr(token, "column", None)
    width = len(str(token)) if token.type not in ("_NL", "_INDENT", "_DEDENT", "$END") else 1
    if token.type == "$END":
        line, column = None, None  # span_at puts it just past the last line
    elif token.type in ("_INDENT", "_DEDENT") and getattr(token, "start_pos", None) is not None:
        line, column = _next_code_line(source, token.start_pos, line)
    elif token.type == "_NL" and line is not None:
        # Point just past the end of the previous line, where the missing piece belongs.
        previous = source_line(source, line)
        column = len(previous.rstrip()) + 1 if previous.strip() else column
    message = (f"only a plain name can be assigned to; use '==' to compare" if token.type == "EQUAL"
               else f"unexpected {_describe_token(token)}")
    return JostleSyntaxError(message, span_at(source, line, column, width), hint)


def dedent_error(error: IndentMismatch, source: Source) -> JostleSyntaxError:
    token = error.token
    line, column = _next_code_line(source, token.start_pos, token.line)
    columns = " or ".join(str(level + 1) for level in error.levels)
    return JostleSyntaxError(
        "this line's indentation matches no enclosing block", span_at(source, line, column),
        f"indent it to start in column {columns}, like the block it belongs to",
    )
