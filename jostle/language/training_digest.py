"""The experience cache's key for Jostle-defined options, metafeatures and ChoiceMakers:
`public_digest` hashes a function's code and the public values it reads (through the training
boundary's copy, `jostle.language.training_boundary`), so that a cached experience is reused only
for the same code on the same public values. Private values are never hashed: a withheld name
contributes only its public description.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from jostle.language import ast_nodes as A
from jostle.language.training_boundary import WithheldRead, _free_reads, _resolve
from jostle.language.values import Closure, Record


def _ast_text(node: Any) -> str:
    """A node's structure without its spans (where it sits in the file does not matter)."""
    from dataclasses import fields

    if isinstance(node, A.Node):
        parts = [_ast_text(getattr(node, f.name)) for f in fields(node) if f.name != "span"]
        return f"{type(node).__name__}({','.join(parts)})"
    if isinstance(node, tuple):
        return "(" + ",".join(_ast_text(item) for item in node) + ")"
    return repr(node)


def public_digest(closure: Closure) -> str:
    """A hash of a training copy's code and of every public value it reads (transitively).

    The experience cache is keyed by it: training a closure over public globals depends on
    their values, so another value retrains instead of reusing experience computed with the
    old one. Withheld names enter by name and description only (public facts).
    """
    from jostle.language.values import Builtin, BoundMethod, Module, Table

    seen: dict[int, str] = {}

    def of_function(function: Closure) -> str:
        key = id(function)
        if key in seen:
            return seen[key]
        seen[key] = f"recursive {function.name}"
        parts = [function.name, _ast_text(function.params), _ast_text(function.body),
                 of_value(function.defaults)]
        for read in _free_reads(function.params, function.body):
            label = read.id if isinstance(read, A.Name) else f"{read.target.id}.{read.name}"
            try:
                _, value = _resolve(function.env, read)
                parts.append(f"{label}={of_value(value)}")
            except KeyError:
                parts.append(f"{label} undefined")
            except WithheldRead as error:
                parts.append(f"{label} withheld: {error.reason}")
        seen[key] = hashlib.sha256("\n".join(parts).encode()).hexdigest()
        return seen[key]

    def of_value(value: Any) -> str:
        if value is None or isinstance(value, (bool, int, float, str, np.generic)):
            return f"{type(value).__name__}:{value!r}"
        if isinstance(value, np.ndarray):
            if value.dtype.kind == "O":
                return "array(" + ",".join(of_value(v) for v in value.ravel()) + f"){value.shape}"
            return f"array:{value.dtype}:{value.shape}:{hashlib.sha256(value.tobytes()).hexdigest()}"
        if isinstance(value, tuple):
            return "(" + ",".join(of_value(v) for v in value) + ")"
        if isinstance(value, Record):
            return "{" + ",".join(f"{k}:{of_value(v)}" for k, v in value.fields) + "}"
        if isinstance(value, Closure):
            return "function:" + of_function(value)
        if isinstance(value, Builtin):
            return f"builtin:{value.name}"
        if isinstance(value, BoundMethod):
            return f"method:{value.builtin.name}:{of_value(value.target)}"
        if isinstance(value, Module):
            key = id(value)
            if key not in seen:
                seen[key] = f"module {value.name}"
                items = sorted((k, v) for k, v in value.env.values.items())
                withheld = sorted(getattr(value.env.values, "withheld", {}).items())
                seen[key] = hashlib.sha256(repr([(k, of_value(v)) for k, v in items] + withheld)
                                           .encode()).hexdigest()
            return f"module:{value.name}:{seen[key]}"
        if isinstance(value, Table):
            rows = _table_digest(value.frame)
            return f"table:{value.name}:{value.schema.describe()}:{rows}"
        if hasattr(type(value), "digest_text"):  # Jostle-defined options, metafeatures, ChoiceMakers
            return value.digest_text(of_value, of_function)
        fingerprint = getattr(value, "fingerprint", None)
        if isinstance(fingerprint, str):
            return f"{type(value).__name__}:{fingerprint}"
        return f"{type(value).__name__}:{value}"

    return of_function(closure)


def _table_digest(frame: Any) -> str:
    """A content hash of a public table's rows."""
    import pandas as pd

    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes() + ",".join(map(str, frame.columns)).encode()).hexdigest()
