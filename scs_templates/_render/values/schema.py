"""The values contract of the cluster charts: ONE source, generated into every chart.

The source is typed models (:mod:`scs_templates._contract.contract`): the values every chart
takes, :data:`scs_templates._contract.model.ClusterValues`, written once, and each provider's
part (:attr:`scs_templates.providers.interface.Provider.values_model`: its keys of ``controlPlane``,
``workers[]`` and ``network``, its top-level sections). The values builders return the
same models, so mypy holds them to the contract that helm holds the values to.
Each provider chart's ``values.schema.json`` (draft-07, closed objects: helm validates the
values against it before rendering, so a misspelled or stray value fails loudly) is
generated here from them. Nobody edits a chart's schema by hand: change a model and run::

    python -m scs_templates._render.values.schema          # writes charts/*/values.schema.json

``tests/unit/test_values_contract.py`` fails while a generated schema is stale, and when the
contract holds a value that no chart template reads.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scs_templates._contract.contract import json_schema, object_part
from scs_templates._core.atomic import write_file
from scs_templates._render.charts import charts_dir
from scs_templates.providers.registry import shipped_providers

if TYPE_CHECKING:
    from scs_templates.providers.interface import Provider

__all__ = ["chart_values_schema", "common_schema", "schema_text", "write_chart_schemas"]

DRAFT = "http://json-schema.org/draft-07/schema#"
_ID = "https://scs.community/scs-templates/charts/{chart}/values.schema.json"


def common_schema() -> dict[str, Any]:
    """The part of the contract every provider chart shares: the schema of
    :data:`~scs_templates._contract.model.ClusterValues` with its ``definitions``."""
    from scs_templates._contract.model import DEFINITIONS, ClusterValues  # deferred: pydantic

    definitions: dict[str, Any] = {}
    for definition in DEFINITIONS:
        json_schema(definition, definitions)
    schema = json_schema(ClusterValues, definitions)
    schema["definitions"] = definitions
    return schema


def _extend(target: dict[str, Any], model: type | None, definitions: dict[str, Any]) -> None:
    """Add the keys of a provider's ``TypedDict`` to an object schema."""
    if model is None:
        return

    part = object_part(model, definitions)
    target["required"] = [*target["required"], *part.get("required", [])]
    target["properties"] = {**target["properties"], **part["properties"]}


def chart_values_schema(provider: Provider) -> dict[str, Any]:
    """The complete values schema of ``provider``'s chart."""

    common = common_schema()
    model = provider.values_model
    definitions: dict[str, Any] = common.pop("definitions")
    properties = common["properties"]
    _extend(properties["controlPlane"], model.control_plane, definitions)
    _extend(properties["workers"]["items"], model.worker, definitions)
    _extend(properties["network"], model.network, definitions)
    sections: dict[str, Any] = (
        object_part(model.sections, definitions)["properties"] if model.sections else {}
    )
    common["properties"] = {**properties, **sections}
    # the values of a cluster need every section; the values of a ClusterClass's own
    # release are its name and namespace, never anything of a cluster
    required = [*common.pop("required"), *sections]
    return {
        "$schema": DRAFT,
        "$id": _ID.format(chart=provider.chart),
        "title": f"{provider.chart} values (computed by scs-templates from the cluster settings)",
        **common,
        "definitions": definitions,
        "if": {"required": ["clusterClass"]},
        "then": {"not": {"required": ["cluster"]}},
        "else": {"required": required},
    }


def schema_text(provider: Provider) -> str:
    """The file content of ``provider``'s ``values.schema.json``."""
    return json.dumps(chart_values_schema(provider), indent=2) + "\n"


def write_chart_schemas(charts: Path | None = None) -> list[Path]:
    """Write the schema of every shipped provider's chart; return the files changed."""

    root = charts if charts is not None else charts_dir()
    changed = []
    for provider in shipped_providers():
        path = provider.chart_source(root) / "values.schema.json"
        text = schema_text(provider)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            write_file(path, text)
            changed.append(path)
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scs_templates._render.values.schema [CHARTS_DIR]``: regenerate the schemas."""
    args = list(sys.argv[1:] if argv is None else argv)
    for path in write_chart_schemas(Path(args[0]) if args else None):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
