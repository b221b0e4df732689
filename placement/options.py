"""Keyword options checked against a signature: one checker for solvers and policies.

``--option KEY=VALUE`` values arrive as JSON (numbers, booleans, strings, null, lists,
objects). :func:`check_options` checks each against the annotation of the parameter it sets,
before anything runs, and returns the values converted to what the parameter takes; a value
that does not fit is one :class:`InstanceError` naming ``--option KEY``.

Annotations understood (anything else cannot be set from the command line):

- ``bool``, ``int``, ``float`` (finite), ``str``, ``None``; unions of them (``float | None``);
- ``Literal[...]``: one of the choices;
- ``Annotated[int | float, Range(lo, hi)]``: a number within bounds (:class:`Range`);
- ``tuple[T, ...]``, ``tuple[T1, T2]``, ``list[T]``, ``frozenset[T]``: a JSON list of such values;
- ``dict[str, T]``, ``Mapping[str, T]``: a JSON object whose values fit ``T``;
- a ``NamedTuple`` class: a list of its fields in order, each fitting its annotation;
- a dataclass: an object of some of its fields (the rest keep their defaults), each fitting
  its annotation, then built (its own ``__post_init__`` check is the last word).

An already built value of the annotated class (a Python caller passing a ``DataPlacement``)
passes as it is.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import math
import types
import typing
from dataclasses import dataclass
from typing import Any

from .errors import InstanceError

__all__ = ["Range", "check_value", "check_options", "settable", "NonNegInt", "PosInt", "NonNegFloat", "PosFloat",
           "Fraction", "option_listing"]

MAX_INT = 2**53
UNANNOTATED = object()  # a parameter without annotation: its value passes unchecked


@dataclass(frozen=True)
class Range:
    """Bounds of a number option: ``lo <= v <= hi`` (strict where ``*_open``)."""

    lo: float = -math.inf
    hi: float = math.inf
    lo_open: bool = False
    hi_open: bool = False

    def holds(self, v: float) -> bool:
        lo_ok = v > self.lo if self.lo_open else v >= self.lo
        hi_ok = v < self.hi if self.hi_open else v <= self.hi
        return lo_ok and hi_ok

    def text(self) -> str:
        def num(x: float) -> str:
            return str(int(x)) if float(x).is_integer() else f"{x:g}"

        parts = []
        if self.lo > -math.inf:
            parts.append(f"{'>' if self.lo_open else '>='} {num(self.lo)}")
        if self.hi < math.inf:
            parts.append(f"{'<' if self.hi_open else '<='} {num(self.hi)}")
        return " and ".join(parts)


class _Refused(Exception):
    """The value does not fit; ``what`` says what it must be."""

    def __init__(self, what: str, where_suffix: str = ""):
        super().__init__(what)
        self.what, self.suffix = what, where_suffix


def _describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is type(None):
        return "null"
    if hint in (bool, int, float, str):
        return hint.__name__
    if origin is typing.Literal:
        return f"one of {list(args)}"
    if origin is typing.Annotated:
        rng = next((a for a in args[1:] if isinstance(a, Range)), None)
        return _describe(args[0]) + (f" {rng.text()}" if rng else "")
    if origin in (typing.Union, types.UnionType):
        return " or ".join(d for d in (_describe(a) for a in args) if d)
    if origin in (tuple, list, frozenset, set, collections.abc.Sequence):
        return "a list"
    if origin in (dict, collections.abc.Mapping):
        return "an object"
    if _settable_dataclass(hint):
        return f"an object of {hint.__name__}'s fields"
    if _is_namedtuple(hint):
        return "a list"
    return ""


def _is_namedtuple(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def settable(hint: Any) -> bool:
    """Whether a command-line (JSON) value can ever fit ``hint``."""
    origin = typing.get_origin(hint)
    if hint is type(None):
        return False  # null alone sets nothing (an optional array stays unsettable)
    if hint in (bool, int, float, str):
        return True
    if origin in (typing.Union, types.UnionType):
        return any(settable(a) for a in typing.get_args(hint))
    if origin is typing.Annotated:
        return settable(typing.get_args(hint)[0])
    if origin in (typing.Literal, tuple, list, frozenset, set, dict, collections.abc.Mapping,
                  collections.abc.Sequence):
        return True
    return _is_namedtuple(hint) or _settable_dataclass(hint)


def _settable_dataclass(hint: Any) -> bool:
    """A dataclass the command line can build: every field it takes is settable (a class holding
    arrays, like a data placement, is data a Python caller passes, not an option)."""
    if not (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
        return False
    hints = typing.get_type_hints(hint, include_extras=True)
    return all(_scalar(hints.get(f.name, Any)) for f in dataclasses.fields(hint) if f.init)


def _scalar(hint: Any) -> bool:
    """A field the command line sets with one JSON scalar (numbers, booleans, strings, choices)."""
    origin = typing.get_origin(hint)
    if hint in (bool, int, float, str) or origin is typing.Literal:
        return True
    if origin is typing.Annotated:
        return _scalar(typing.get_args(hint)[0])
    if origin in (typing.Union, types.UnionType):
        return all(_scalar(a) or a is type(None) for a in typing.get_args(hint))
    return False


def _built(value: Any, hint: Any) -> bool:
    """``value`` is already an object of the annotated class, or of a class of the annotated
    union (``DataPlacement | None``): a Python caller built it."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_built(value, h) for h in typing.get_args(hint) if h is not type(None))
    return (isinstance(hint, type) and hint is not Any and not _is_namedtuple(hint)
            and hint not in (bool, int, float, str) and isinstance(value, hint))


def _shape_of(hint: Any) -> str | None:
    """The JSON kind a hint takes (for naming the member of a union a value was meant for)."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _shape_of(typing.get_args(hint)[0])
    if hint in (int, float):
        return "number"
    if hint is bool:
        return "bool"
    if hint is str or origin is typing.Literal:
        return "str"
    if origin in (dict, collections.abc.Mapping) or _settable_dataclass(hint):
        return "object"
    if origin in (tuple, list, frozenset, set, collections.abc.Sequence) or _is_namedtuple(hint):
        return "list"
    return None


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "str"
    if isinstance(value, dict):
        return "object"
    return "list" if isinstance(value, (list, tuple)) else "other"


def _check(value: Any, hint: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if _built(value, hint):
        return value  # an object a Python caller built
    if hint is type(None):
        if value is None:
            return None
        raise _Refused("null")
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise _Refused("bool")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_INT:
            return value
        raise _Refused("int" if not isinstance(value, int) or isinstance(value, bool)
                       else "int of magnitude at most 2**53")
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                and abs(value) <= 1e300:
            return float(value) if isinstance(value, float) else value
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        raise _Refused("a finite float of magnitude at most 1e300" if number else "float")
    if hint is str:
        if isinstance(value, str):
            return value
        raise _Refused("str")
    if origin is typing.Literal:
        if any(value == a and type(value) is type(a) for a in args):
            return value
        raise _Refused(f"one of {list(args)}")
    if origin is typing.Annotated:
        v = _check(value, args[0])
        for meta in args[1:]:
            if isinstance(meta, Range) and isinstance(v, (int, float)) and not meta.holds(v):
                raise _Refused(_describe(hint))
        return v
    if origin in (typing.Union, types.UnionType):
        refusals = {}
        for a in args:
            try:
                return _check(value, a)
            except _Refused as r:
                refusals[a] = r
        meant = [a for a in args if _shape_of(a) == _json_kind(value)]
        if len(meant) == 1 and _shape_of(meant[0]) in ("object", "list", "number"):
            r = refusals[meant[0]]  # the member the value was written for says what is wrong inside
            if not r.suffix and type(None) in args:
                raise _Refused(f"{r.what} or null")
            raise r
        raise _Refused(_describe(hint))
    if origin in (tuple, list, frozenset, set, collections.abc.Sequence):
        if not isinstance(value, (list, tuple)):
            raise _Refused(_describe(hint))
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(value) != len(args):
                raise _Refused(f"a list of {len(args)} values")
            items = [_item(v, a, i) for i, (v, a) in enumerate(zip(value, args, strict=True))]
        else:
            inner = args[0] if args else Any
            items = [_item(v, inner, i) for i, v in enumerate(value)]
        if origin in (frozenset, set):
            return frozenset(items)
        return tuple(items) if origin in (tuple, collections.abc.Sequence) else items
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            raise _Refused("an object")
        kt, vt = args if len(args) == 2 else (str, Any)
        out = {}
        for k, v in value.items():
            key = _item(k, kt, "")
            out[key] = _item(v, vt, k)
        return out
    if _is_namedtuple(hint):
        hints = typing.get_type_hints(hint)
        if not isinstance(value, (list, tuple)) or len(value) != len(hint._fields):
            raise _Refused(f"a list of {len(hint._fields)} values ({', '.join(hint._fields)})")
        return hint(*(_item(v, hints.get(f, Any), i) for i, (f, v) in enumerate(zip(hint._fields, value,
                                                                                     strict=True))))
    if _settable_dataclass(hint):
        if not isinstance(value, dict):
            raise _Refused(f"an object of {hint.__name__}'s fields")
        hints = typing.get_type_hints(hint)
        fields = {f.name for f in dataclasses.fields(hint) if f.init}
        kwargs = {}
        for k, v in value.items():
            if k not in fields:
                raise _Refused(f"one of the fields {sorted(fields)}", f".{k}")
            kwargs[k] = _item(v, hints.get(k, Any), k)
        try:
            return hint(**kwargs)
        except (TypeError, ValueError) as exc:
            raise _Refused(f"valid ({exc})") from None
    if hint is Any:
        raise _Refused("a value the command line cannot give")
    raise _Refused(_describe(hint))


def _item(value: Any, hint: Any, at: Any) -> Any:
    """An element of a list or object: a refusal names where inside the value it happened."""
    try:
        return _check(value, hint)
    except _Refused as r:
        where = f"[{at!r}]" if not isinstance(at, str) else (f".{at}" if at else "")
        raise _Refused(r.what, where + r.suffix) from None


def check_value(value: Any, hint: Any, where: str) -> Any:
    """``value`` converted to fit ``hint``; :class:`InstanceError` naming ``where`` otherwise."""
    try:
        return _check(value, hint)
    except _Refused as r:
        shown = repr(value)
        raise InstanceError(where + r.suffix, f"must be {r.what}, got {shown[:60]}") from None


def _parameters(fn: Any) -> dict[str, tuple[inspect.Parameter, Any]]:
    """Keyword parameters of ``fn`` (a function or a class) with their annotations, following
    ``**kwargs`` of a subclass's ``__init__`` to its parent's."""
    out: dict[str, tuple[inspect.Parameter, Any]] = {}
    targets = [c.__init__ for c in fn.__mro__ if "__init__" in vars(c)] if isinstance(fn, type) else [fn]
    for target in targets:
        try:
            hints = typing.get_type_hints(target, include_extras=True)
        except Exception:  # an annotation that cannot be resolved: names only
            hints = {}
        params = inspect.signature(target).parameters
        more = False
        for name, p in params.items():
            if name == "self" or p.kind in (p.VAR_POSITIONAL,):
                continue
            if p.kind is p.VAR_KEYWORD:
                more = True
                continue
            out.setdefault(name, (p, hints.get(name, UNANNOTATED)))
        if not more:
            break
    return out


def check_options(fn: Any, options: dict[str, Any], *, owner: str, reserved: dict[str, str] | None = None,
                  extra: dict[str, Any] | None = None, only: list[str] | None = None) -> dict[str, Any]:
    """``options`` checked against the keyword parameters of ``fn`` (plus ``extra``: name ->
    annotation of options something else consumes) and converted; one :class:`InstanceError`
    naming ``--option`` or ``--option KEY`` otherwise. ``owner`` names ``fn`` in messages
    (``solver 'lns'``); ``reserved`` maps parameters with their own flag to that flag; ``only``
    restricts the parameters that count (a solver's, after its instance)."""
    params = {name: hint for name, (_, hint) in _parameters(fn).items() if only is None or name in only}
    params.update(extra or {})
    usable = [p for p in params if p not in (reserved or {})]
    out = {}
    for key, value in options.items():
        if reserved and key in reserved:
            raise InstanceError("--option", f"{key!r} is set with {reserved[key]}, not --option")
        if key not in params:
            raise InstanceError("--option", f"{key!r} is not a parameter of {owner} "
                                f"(it takes {', '.join(usable) or 'none'})")
        hint = params[key]
        if hint is UNANNOTATED:
            out[key] = value
            continue
        if not settable(hint) and not _built(value, hint):
            if value is None and type(None) in typing.get_args(hint):
                out[key] = None
                continue
            raise InstanceError("--option", f"{key!r} of {owner} cannot be set from the command line")
        out[key] = check_value(value, hint, f"--option {key}")
    return out


# Annotations policies and solvers share (``Annotated`` numbers the checker bounds).
NonNegInt = typing.Annotated[int, Range(0)]
PosInt = typing.Annotated[int, Range(1)]
NonNegFloat = typing.Annotated[float, Range(0)]
PosFloat = typing.Annotated[float, Range(0, lo_open=True)]
Fraction = typing.Annotated[float, Range(0, 1)]


def option_listing(fn: Any, only: list[str] | None = None) -> list[dict[str, Any]]:
    """The keyword options of ``fn`` (a policy class or a solver) as :func:`check_options` reads
    them: one row per option with its ``option`` name, the ``type`` a value must have (as the
    checker's messages say it: ``float >= 0``, ``one of ['a', 'b']``; empty when the option
    cannot be set from the command line) and its ``default`` (None when it has none)."""
    rows = []
    for name, (p, hint) in _parameters(fn).items():
        if only is not None and name not in only:
            continue
        settable_ = hint is UNANNOTATED or settable(hint)
        rows.append({"option": name, "type": ("any" if hint is UNANNOTATED else _describe(hint)) if settable_ else "",
                     "default": None if p.default is inspect.Parameter.empty else p.default})
    return rows
