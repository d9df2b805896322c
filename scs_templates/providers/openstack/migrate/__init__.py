"""Migration of settings from earlier SCS cluster tooling (KaaS v1 ``clusterctl.yaml``:
:func:`.kaas_v1.migrate_kaas_v1`, the entry point of ``scs_templates.migrations``).

This package re-exports nothing: the ``migrate`` command's module (:mod:`.cli`), which
``--help`` imports, pays for none of the reader.
"""
