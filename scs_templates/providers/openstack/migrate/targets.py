"""Settings paths as the key table writes them, resolved against the settings model.

The key table (:mod:`.key_table`) names its targets the way the documentation does
(``spec.workers[0].zone``); :func:`path` turns that into a document path and
:func:`model_field` finds the field of :class:`~scs_templates._settings.model.ClusterSettings`
it names. A field renamed in the model without the table following fails
:func:`model_field` (tested for every row), and defaults quoted in the report are read from
the model (:func:`default_of`), not written a second time.
"""

from __future__ import annotations

import re
import types
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

    from scs_templates._settings.problems import Path

_PART = re.compile(r"([A-Za-z][A-Za-z0-9]*)((?:\[\d+\])*)")


def path(text: str) -> Path:
    """``spec.workers[0].zone`` -> ``("spec", "workers", 0, "zone")``."""
    parts: list[str | int] = []
    for part in text.split("."):
        match = _PART.fullmatch(part)
        if match is None:
            raise ValueError(f"{text!r}: {part!r} is not a settings key")
        parts.append(match[1])
        parts.extend(int(index) for index in re.findall(r"\[(\d+)\]", match[2]))
    return tuple(parts)


def model_field(target: Path) -> FieldInfo:
    """The field of the settings model at ``target``; KeyError naming the part that is not."""
    from scs_templates._settings.model import settings_model  # deferred: pydantic

    current: Any = settings_model(shipped=True)
    found: FieldInfo | None = None
    for index, part in enumerate(target):
        if isinstance(part, int):
            item = _list_item(current)
            if item is None:
                raise KeyError(f"{target}: {target[:index]} is not a list")
            current = item
            continue
        model = _model_in(current)
        if model is None:
            raise KeyError(f"{target}: {target[:index]} has no fields")
        by_key = {info.alias or name: info for name, info in model.model_fields.items()}
        if part not in by_key:
            raise KeyError(f"{target}: {part!r} is not a field of {model.__name__}")
        found = by_key[part]
        current = found.annotation
    if found is None or isinstance(target[-1], int):
        raise KeyError(f"{target}: not a field")
    return found


def default_of(target: Path) -> Any:
    """The model's default at ``target`` (``spec.network.nodeCIDR`` -> ``10.8.0.0/20``)."""
    return model_field(target).get_default(call_default_factory=True)


def _options(annotation: Any) -> tuple[Any, ...]:
    """The types an annotation allows: Annotated unwrapped, unions split."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _options(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return tuple(option for arg in get_args(annotation) for option in _options(arg))
    return (annotation,)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    from pydantic import BaseModel  # deferred: pydantic

    for option in _options(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel):
            return option
    return None


def _list_item(annotation: Any) -> Any:
    for option in _options(annotation):
        if get_origin(option) is list:
            return get_args(option)[0]
    return None
