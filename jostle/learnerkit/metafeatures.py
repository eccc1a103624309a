"""Metafeatures defined by a function, and the standard metafeatures of a classification table.

A `FunctionMetafeature` is a named function `f(data, epsilon_mf, noise, context) -> float`:
public (`cost=False`: it reads the schema or the budget) or noisy (`cost=True`: it reads the
private rows and spends the epsilon it is given, with its sensitivity argument next to it).
Derived ones list in `requires` the metafeatures they post-process; ones that post-process one
shared release name it in `release`.

Its `fingerprint`, a key of the experience cache, hashes the source of EVERYTHING the function
calls (`code_digest`): the function, and transitively every function and class of a `jostle`
module (or of the package defining the function) it names, through module attributes, imports
in its body, closures and nested functions. An edit to a helper
therefore invalidates the cache, and an edit elsewhere in the module does not.

`CLASSIFICATION_METAFEATURES` are the standard ones of a `ClassificationData` (privacy unit: one
row added or removed), written once for every classifier family.
"""

from __future__ import annotations

import dis
import functools
import hashlib
import inspect
import math
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from jostle.choicemaker.family import MetafeatureContext
from jostle.learnerkit.tables import ClassificationData
from jostle.privacy import replay

MeasureFunction = Callable[[Any, float, Any, MetafeatureContext], float]

PACKAGE = "jostle"


@dataclass(frozen=True)
class FunctionMetafeature:
    """A named summary of a family's input, computed by a function.

    Args:
        name: Feature name (a column of the experience table, an input of the meta-model).
        cost: True if it reads the private rows and must be given epsilon.
        function: f(data, epsilon_mf, noise, context) -> float.
        sensitivity: The sensitivity argument (for documentation and reports).
        requires: Metafeatures this one post-processes (measured earlier in the same call).
        release: Name of the shared release this metafeature post-processes ("" for none):
            metafeatures with the same release cost one charge together.
    """

    name: str
    cost: bool
    function: MeasureFunction = field(repr=False, compare=False)
    sensitivity: str = ""
    requires: tuple[str, ...] = ()
    release: str = ""

    def measure(self, data: Any, epsilon_mf: float, noise: Any, context: MetafeatureContext) -> float:
        """The feature's value, spending `epsilon_mf` (0 for public and derived ones)."""
        if self.cost and not epsilon_mf > 0:
            raise ValueError(f"metafeature {self.name!r} reads private rows and needs epsilon > 0")
        return float(self.function(data, float(epsilon_mf), noise, context))

    @property
    def fingerprint(self) -> str:
        """Cache identity: name, cost, requires, release and the source of all the function calls."""
        text = f"{self.name}|{self.cost}|{self.requires}|{code_digest(self.function)}"
        return text + (f"|{self.release}" if self.release else "")


@functools.lru_cache(maxsize=None)
def code_digest(function: Callable[..., Any]) -> str:
    """A short hash of the source of `function` and of every function and class it reaches
    (names it reads from its module's globals, from a module it names or imports in its body,
    closures, nested functions, methods of classes), transitively, within `jostle` and within the
    package that defines `function` (a family written outside `jostle` is followed in its own
    package). Objects elsewhere (numpy, the standard library) are not followed."""
    module = getattr(function, "__module__", None) or ""
    roots = frozenset({PACKAGE, module.split(".")[0]} - {""})
    sources: dict[str, str] = {}
    _visit(function, sources, roots, force=True)
    digest = hashlib.sha256()
    for key in sorted(sources):
        digest.update(key.encode() + b"\0" + sources[key].encode() + b"\0")
    return digest.hexdigest()[:16]


def _ours(value: Any, roots: frozenset[str]) -> bool:
    return _in(getattr(value, "__module__", None) or "", roots)


def _in(module: str, roots: frozenset[str]) -> bool:
    return any(module == root or module.startswith(root + ".") for root in roots)


def _source(value: Any) -> str:
    try:
        return inspect.getsource(value)
    except (OSError, TypeError):
        return getattr(value, "__qualname__", repr(value))


def _visit(value: Any, sources: dict[str, str], roots: frozenset[str], force: bool = False) -> None:
    """Add the source of `value` and of what it reaches to `sources` (key: module.qualname);
    `force`: hash `value` itself wherever it is defined."""
    if isinstance(value, functools.partial):
        for part in (value.func, *value.args, *value.keywords.values()):
            _visit(part, sources, roots, force)
        return
    if isinstance(value, (types.MethodType, staticmethod, classmethod)):
        _visit(value.__func__, sources, roots, force)
        return
    if isinstance(value, property):
        for accessor in (value.fget, value.fset, value.fdel):
            if accessor is not None:
                _visit(accessor, sources, roots)
        return
    if not isinstance(value, (types.FunctionType, type)):
        if callable(value) and (force or _ours(type(value), roots)):
            _visit(type(value), sources, roots, force)  # a callable object: its class's code
        return
    if not (force or _ours(value, roots)):
        return
    key = f"{value.__module__}.{value.__qualname__}"
    if key in sources:
        return
    sources[key] = _source(value)
    if isinstance(value, type):
        for member in vars(value).values():
            if isinstance(member, (types.FunctionType, staticmethod, classmethod, property)):
                _visit(member, sources, roots)
        return
    names = _names(value.__code__)
    scope = value.__globals__
    for name in sorted(names):
        if name in scope:
            _follow(scope[name], names, sources, roots)
    for module in _imported(value.__code__):
        _follow(module, names, sources, roots)
    for cell in value.__closure__ or ():
        try:
            _follow(cell.cell_contents, names, sources, roots)
        except ValueError:  # an empty cell
            continue


def _follow(value: Any, names: set[str], sources: dict[str, str], roots: frozenset[str]) -> None:
    """A global or closure value the code names: a module of ours is followed through the
    attributes the code names; anything else is visited."""
    if isinstance(value, types.ModuleType):
        if _in(value.__name__, roots):
            for name in sorted(names):
                attribute = getattr(value, name, None)
                if attribute is not None and not isinstance(attribute, types.ModuleType):
                    _visit(attribute, sources, roots)
        return
    _visit(value, sources, roots)


def _imported(code: types.CodeType) -> list[types.ModuleType]:
    """The already loaded modules that `code` (and the code nested in it) imports inside itself,
    e.g. `from jostle.privacy import safe_noise` in a function body."""
    found: list[types.ModuleType] = []
    module = ""
    for instruction in dis.get_instructions(code):
        if instruction.opname == "IMPORT_NAME":
            module = str(instruction.argval)
            candidates = [module]
        elif instruction.opname == "IMPORT_FROM" and module:
            candidates = [f"{module}.{instruction.argval}"]
        else:
            continue
        found += [sys.modules[name] for name in candidates if name in sys.modules]
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            found += _imported(constant)
    return found


def _names(code: types.CodeType) -> set[str]:
    """Every global or attribute name `code` and the code nested in it read."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names(constant)
    return names


# ---------------------------------------------------------------- the standard classification metafeatures
def _noisy_size(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # The number of rows: one row added or removed changes it by 1 (sensitivity 1); two-sided
    # geometric noise P(k) ~ exp(-eps |k|) is eps-DP (Ghosh et al. 2009). Flooring at 1 is
    # post-processing.
    return max(float(replay.released(noise, "classification rows", data.n_rows, data.n_rows + int(np.asarray(noise.two_sided_geometric(eps, 1)).ravel()[0]), "l1", 1, 1)), 1.0)  # noqa: E501


def _class_balance(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # The class histogram: one row changes one class count by 1 (L1 sensitivity 1), geometric
    # noise on each count is eps-DP. The released value is the largest class's share of the
    # clipped noisy counts (post-processing); 1 / C when every noisy count is <= 0.
    counts = np.bincount(data.y, minlength=data.n_classes)
    noisy = np.clip(replay.released(noise, "class counts", counts, counts + np.asarray(noise.two_sided_geometric(eps, data.n_classes), dtype=float), "l1", 1, 1), 0.0, None)  # noqa: E501
    return float(noisy.max() / noisy.sum()) if noisy.sum() > 0 else 1.0 / data.n_classes


def _n_attributes(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(data.n_attributes)  # public: the schema


def _branching(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(np.mean(data.domain_sizes)) if data.domain_sizes else 1.0  # public domain sizes


def _n_classes(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(data.n_classes)  # public class list


def _epsilon(data: Any, eps: float, noise: Any, context: MetafeatureContext) -> float:
    return float(context.epsilon)  # public: the chosen Option's budget


def _log_rows_per_cell(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # log10(noisy size / product of the public domain sizes): post-processing of "size".
    return math.log10(max(context.released["size"], 1.0)) - float(np.sum(np.log10(data.domain_sizes)))


def _log_signal(data: ClassificationData, eps: float, noise: Any, context: MetafeatureContext) -> float:
    # log10(noisy size * epsilon / (classes * mean branching)): rows per child and class of a
    # first split, in units of the count noise 1/epsilon. Post-processing of "size".
    branching = max(float(np.mean(data.domain_sizes)), 1.0) if data.domain_sizes else 1.0
    return math.log10(max(context.released["size"], 1.0) * context.epsilon / (data.n_classes * branching))


EPSILON = FunctionMetafeature("epsilon", False, _epsilon, "public (the Option's budget)")
N_ATTRIBUTES = FunctionMetafeature("n_attributes", False, _n_attributes, "public")

CLASSIFICATION_METAFEATURES: dict[str, FunctionMetafeature] = {m.name: m for m in [
    FunctionMetafeature("size", True, _noisy_size, "1 (row count)"),
    FunctionMetafeature("class_balance", True, _class_balance, "1 (L1 of the class histogram)"),
    N_ATTRIBUTES,
    FunctionMetafeature("branching", False, _branching, "public (mean domain size)"),
    FunctionMetafeature("n_classes", False, _n_classes, "public"),
    EPSILON,
    FunctionMetafeature("log_rows_per_cell", False, _log_rows_per_cell, "post-processing of size", ("size",)),
    FunctionMetafeature("log_signal", False, _log_signal, "post-processing of size", ("size",)),
]}
"""The standard metafeatures of a classification table (privacy unit: one row added or removed)."""
