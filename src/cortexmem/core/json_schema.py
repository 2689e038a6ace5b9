"""Checking a model's JSON answer against the schema it was asked for. Pure.

A small subset of JSON Schema, the part a prompt's schema uses: ``type`` (one or a list),
``properties``, ``required``, ``additionalProperties: false``, ``items``, ``enum``,
``minimum``/``maximum``, ``minLength``/``maxLength``, ``minItems``/``maxItems``. Anything else
in a schema is ignored. A malformed answer is an error a caller sees, never silently "nothing".
"""

from __future__ import annotations

import json
import re
from typing import Any

TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}
MAX_ERRORS = 5
_FENCED = re.compile(r"```(?:json)?\s*\n(.*?)\n\s*```", re.S)


def _is(value: Any, kind: str) -> bool:
    if kind in ("number", "integer") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, TYPES.get(kind, (object,)))


def errors(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """Where ``value`` breaks ``schema`` (empty: it conforms), at most ``MAX_ERRORS``."""
    found: list[str] = []
    _check(value, schema, where, found)
    return found[:MAX_ERRORS]


def _check(value: Any, schema: dict[str, Any], where: str, found: list[str]) -> None:
    if len(found) >= MAX_ERRORS or not isinstance(schema, dict):
        return
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_is(value, k) for k in kinds):
            found.append(f"{where}: expected {' or '.join(kinds)}, got {type(value).__name__}")
            return
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            found.append(f"{where}: {value} is below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            found.append(f"{where}: {value} is above {schema['maximum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            found.append(f"{where}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            found.append(f"{where}: longer than {schema['maxLength']} characters")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            found.append(f"{where}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            found.append(f"{where}: more than {schema['maxItems']} items")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                _check(item, schema["items"], f"{where}[{i}]", found)
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for name in schema.get("required", ()):
            if name not in value:
                found.append(f"{where}: missing {name!r}")
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(properties))
            if extra:
                found.append(f"{where}: unexpected {', '.join(map(repr, extra))}")
        for name, sub in properties.items():
            if name in value:
                _check(value[name], sub, f"{where}.{name}", found)


def parse_answer(text: str) -> Any:
    """The JSON value in a model's answer: the whole text, else a fenced ```json block, else
    the outermost ``{...}``. Raises ``ValueError`` when there is none."""
    text = text.strip()
    candidates = [text]
    fenced = _FENCED.search(text)
    if fenced:
        candidates.append(fenced[1])
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    raise ValueError("the answer holds no JSON value")
