"""Write settings back as YAML (for tools that generate settings files, and round trips).

Only values that differ from the defaults are written, so a generated file stays as short
as one a person would write. ruamel.yaml emits YAML 1.2; strings that a YAML 1.1 reader
would misread (``on``, ``0755``) are quoted by the emitter.
"""

from __future__ import annotations

import io
import re
from typing import Any

from scs_templates._settings.model import ClusterSettings

_YAML11_TRAPS = re.compile(
    r"^(?:[yY]|[nN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|[-+]?0[0-9_]+)$"
)


def _represent_str(representer: Any, value: str) -> Any:
    """Quote strings a YAML 1.1 reader (helm, kubectl, many editors) would misread."""
    style = "'" if _YAML11_TRAPS.match(value) else None
    return representer.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def settings_data(settings: ClusterSettings, *, full: bool = False) -> dict[str, Any]:
    """Plain data with YAML keys; defaults left out unless ``full``."""
    data = settings.model_dump(
        mode="json", by_alias=True, exclude_defaults=not full, exclude_none=not full
    )
    # apiVersion and kind have no defaults but be explicit about the order of the header.
    header = {"apiVersion": settings.api_version, "kind": settings.kind}
    return {**header, **{k: v for k, v in data.items() if k not in header}}


def dump_settings(settings: ClusterSettings, *, full: bool = False) -> str:
    """The settings as a YAML document."""
    return dump_data(settings_data(settings, full=full))


def dump_data(data: Any) -> str:
    """Plain data as one block-style YAML 1.2 document, keys in the given order.

    Strings a YAML 1.1 reader would misread are quoted, so helm, kubectl and Flux read the
    document as written.
    """
    from ruamel.yaml import YAML  # deferred: ruamel

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.representer.add_representer(str, _represent_str)
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    stream = io.StringIO()
    yaml.dump(data, stream)
    return stream.getvalue()
