"""The values contract of the cluster charts: ONE source, generated into every chart.

Each provider chart's ``values.schema.json`` (draft-07, closed objects: helm validates the
values against it before rendering, so a misspelled or stray value fails loudly) is
generated here from the part every chart shares, ``common.schema.json`` beside this module,
and the provider's own part (:meth:`scs_templates.providers.Provider.values_schema_part`:
its keys of ``controlPlane``, ``workers[]`` and ``network``, its top-level sections and
definitions).
Nobody edits a chart's schema by hand: change the common part or the provider's part and
run::

    python -m scs_templates.values.schema          # writes charts/*/values.schema.json

``tests/test_values_contract.py`` fails while a generated schema is stale, and when the
contract holds a value that no chart template reads.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scs_templates.atomic import write_file

if TYPE_CHECKING:
    from scs_templates.providers import Provider

__all__ = ["COMMON_PART", "chart_values_schema", "schema_text", "write_chart_schemas"]

DRAFT = "http://json-schema.org/draft-07/schema#"
#: The part of the contract every provider chart shares.
COMMON_PART = Path(__file__).with_name("common.schema.json")
_ID = "https://scs.community/scs-templates/charts/{chart}/values.schema.json"


def _extend(target: dict[str, Any], part: dict[str, Any]) -> None:
    """Add a part's ``properties`` and ``required`` to an object schema."""
    target["required"] = [*target["required"], *part.get("required", [])]
    target["properties"] = {**target["properties"], **part.get("properties", {})}


def chart_values_schema(provider: Provider) -> dict[str, Any]:
    """The complete values schema of ``provider``'s chart."""
    common: dict[str, Any] = json.loads(COMMON_PART.read_text(encoding="utf-8"))
    part = copy.deepcopy(provider.values_schema_part())
    properties = common["properties"]
    _extend(properties["controlPlane"], part.get("controlPlane", {}))
    _extend(properties["workers"]["items"], part.get("worker", {}))
    _extend(properties["network"], part.get("network", {}))
    sections: dict[str, Any] = part.get("sections", {})
    common["required"] = [*common["required"], *sections]
    common["properties"] = {**properties, **sections}
    common["definitions"] = {**common["definitions"], **part.get("definitions", {})}
    # the values of a cluster need every section; the values of a ClusterClass's own
    # release are its name and namespace, never anything of a cluster
    required = common.pop("required")
    return {
        "$schema": DRAFT,
        "$id": _ID.format(chart=provider.chart),
        "title": f"{provider.chart} values (computed by scs-templates from the cluster settings)",
        **common,
        "if": {"required": ["clusterClass"]},
        "then": {"not": {"required": ["cluster"]}},
        "else": {"required": required},
    }


def schema_text(provider: Provider) -> str:
    """The file content of ``provider``'s ``values.schema.json``."""
    return json.dumps(chart_values_schema(provider), indent=2) + "\n"


def write_chart_schemas(charts: Path | None = None) -> list[Path]:
    """Write the schema of every shipped provider's chart; return the files changed."""
    from scs_templates.catalogue import PROVIDERS
    from scs_templates.charts import charts_dir

    root = charts if charts is not None else charts_dir()
    changed = []
    for provider in PROVIDERS:
        path = provider.chart_source(root) / "values.schema.json"
        text = schema_text(provider)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            write_file(path, text)
            changed.append(path)
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scs_templates.values.schema [CHARTS_DIR]``: regenerate the schemas."""
    args = list(sys.argv[1:] if argv is None else argv)
    for path in write_chart_schemas(Path(args[0]) if args else None):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
