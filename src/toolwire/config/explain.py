"""The one formatter that turns a configuration error into one line.

Every configuration error is one line that names the file (or the variable or option a
value came from), the key and what to do: ``FILE: unknown key 'mdoe' in the top level;
did you mean 'mode'?``. The schema (``schema.py``) is pydantic models; ``explain`` reads
the first of their errors and words it from the model's own fields.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from toolwire.config.errors import ConfigError

_TABLE_ERRORS = ("dict_type", "model_type", "model_attributes_type")


def unknown_key(key: str, known: Iterable[str], where: str, section: str) -> str:
    """``WHERE: unknown key 'K' in SECTION;`` and the closest known key, else all of them."""
    allowed = list(known)
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(allowed)}"
    return f"{where}: unknown key {key!r} in {section}; {hint}"


def invalid_choice(key: str, value: object, choices: Sequence[str], source: str) -> str:
    """A top-level choice, worded alike from the file, a variable or an option."""
    return f"{key} {value!r} (from {source}) is not valid; use one of {', '.join(choices)}"


def explain(
    error: ValidationError, model: type[BaseModel], where: str, section: tuple[str, ...] = ()
) -> ConfigError:
    """The first error of validating ``model`` (the table at ``section`` of ``where``).

    An unknown key comes first: a typo also explains the value it left missing.
    """
    details = error.errors(include_url=False)
    first = min(details, key=_rank)
    key = (*section, *(str(part) for part in first["loc"]))
    return ConfigError(_line(first, model, where, section), key=key)


def _rank(detail: ErrorDetails) -> tuple[int, int]:
    """Unknown keys first, the outermost first; then the rest in the schema's order."""
    if detail["type"] == "extra_forbidden":
        return 0, len(detail["loc"])
    return 1, 0


def _line(detail: ErrorDetails, model: type[BaseModel], where: str, prefix: tuple[str, ...]) -> str:
    spot = _Spot(model, tuple(str(p) for p in detail["loc"]), prefix)
    kind, value = detail["type"], detail["input"]
    here = f"{where} [{'.'.join(spot.table)}]" if spot.table else where
    if kind == "extra_forbidden":
        holder = [*spot.table, *spot.keys[:-1]]
        section = f"[{'.'.join(holder)}]" if holder else "the top level"
        return unknown_key(spot.keys[-1], spot.known, where, section)
    if kind == "value_error":  # a validator's own sentence
        return f"{here}: {detail.get('ctx', {}).get('error', detail['msg'])}"
    if kind in _TABLE_ERRORS:
        name = ".".join([*spot.table, *spot.keys])
        return f"{where}: {name} must be a table ([{name}]); fix that section"
    key = ".".join(spot.keys)
    choices = _choices(spot.field)
    if kind == "missing":
        how = f"; set it to one of {', '.join(choices)}" if choices else ""
        return f"{here}: {key} is missing{how}"
    if choices:
        if not spot.table and len(spot.keys) == 1:  # competes with $TOOLWIRE_* and --options
            return invalid_choice(key, value, choices, where)
        return f"{here}: {key} = {value!r} is not valid; use one of {', '.join(choices)}"
    expected, echo = _expected(spot.field)
    return f"{here}: {key} must be {expected}" + (f", got {value!r}" if echo else "")


class _Spot:
    """Where an error sits: the named table holding it (``backends.x``), the keys below
    that table (or from the top, prefixed by the model's own section), the model that owns
    the last key and that key's field."""

    def __init__(self, model: type[BaseModel], loc: tuple[str, ...], prefix: tuple[str, ...]):
        self.table: list[str] = []
        self.keys: list[str] = list(prefix)
        self.known: tuple[str, ...] = ()
        self.field: FieldInfo | None = None
        node: Any = model
        for part in loc:
            if _is_model(node):
                fields = node.model_fields
                self.known, self.field = tuple(fields), fields.get(part)
                self.keys.append(part)
                if self.field is None:
                    return
                node = _bare(self.field.annotation)
            elif get_origin(node) is dict and _is_model(get_args(node)[1]):
                self.table, self.keys = [*self.table, *self.keys, part], []
                node = get_args(node)[1]
            else:  # inside a plain container: the error is its field's
                return


def _is_model(node: Any) -> bool:
    return isinstance(node, type) and issubclass(node, BaseModel)


def _bare(annotation: Any) -> Any:
    """``annotation`` without ``| None`` (and without ``Annotated``)."""
    if get_origin(annotation) in (Union, UnionType):
        rest = [a for a in get_args(annotation) if a is not NoneType]
        annotation = rest[0] if len(rest) == 1 else annotation
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _choices(field: FieldInfo | None) -> tuple[str, ...]:
    kind = _bare(field.annotation) if field is not None else None
    return tuple(get_args(kind)) if get_origin(kind) is Literal else ()


def _expected(field: FieldInfo | None) -> tuple[str, bool]:
    """What the value must be, in words, and whether showing the value is harmless (a
    string may be a secret put in the wrong key)."""
    if field is None:
        return "valid", False
    if field.description:
        return field.description, False
    kind, bounds = _bare(field.annotation), _bounds(field)
    if kind is bool:
        return "true or false", True
    if kind in (int, float):
        noun = "integer" if kind is int else "number"
        if bounds.get("gt") == 0:
            return f"a positive {noun}", True
        article = "an" if kind is int else "a"
        return f"{article} {noun}{' >= 0' if bounds.get('ge') == 0 else ''}", True
    if kind is str:
        return ("a non-empty string" if bounds.get("min_length") else "a string"), False
    return ("a table" if get_origin(kind) is dict else "valid"), False


def _bounds(field: FieldInfo) -> dict[str, Any]:
    """The field's ``gt``/``ge``/``min_length``, wherever its type declares them."""
    metadata = list(field.metadata)
    for member in get_args(field.annotation):
        if get_origin(member) is Annotated:
            metadata += get_args(member)[1:]
    found: dict[str, Any] = {}
    for item in metadata:
        for name in ("gt", "ge", "min_length"):
            if getattr(item, name, None) is not None:
                found[name] = getattr(item, name)
    return found


__all__ = ["explain", "invalid_choice", "unknown_key"]
