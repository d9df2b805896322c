"""Migrate a SCS KaaS v1 ``clusterctl.yaml`` (k8s-cluster-api-provider R3..R6) to settings.

KaaS v1 kept one flat ``KEY: value`` file per cluster. :func:`migrate_kaas_v1` turns such a
file into a commented ClusterSettings document that validates, plus one report line per
input key. The keys and what becomes of each are the rows of
:data:`~.key_table.KEY_TABLE`; this module reads the file (:mod:`.reading`), runs each
row's handler on the key's entry, gives missing keys KaaS v1's own defaults, validates the
result and words its problems by the input key that caused them.

The values of the ``*_B64`` keys are never read into any message or output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._core.errors import InputError
from scs_templates._settings.problems import SettingsError, format_path
from scs_templates._settings.suggestions import did_you_mean
from scs_templates._settings.validate import parse_settings_text
from scs_templates.providers.openstack.migrate.emit import dump
from scs_templates.providers.openstack.migrate.key_table import KEY_TABLE, KEYS
from scs_templates.providers.openstack.migrate.migration import (
    DEFAULT_NAME,
    DEFAULT_PREFIX,
    KeyInfo,
    KeyReport,
    Migration,
    MigrationResult,
)
from scs_templates.providers.openstack.migrate.network import (
    apply_proxy_profile,
    parse_proxy_profile,
)
from scs_templates.providers.openstack.migrate.reading import read_entries
from scs_templates.providers.openstack.migrate.shapes import Problem

if TYPE_CHECKING:
    from scs_templates._settings.problems import Path

__all__ = ["KEY_TABLE", "KeyInfo", "KeyReport", "MigrationResult", "migrate_kaas_v1"]

_SECRET_KEYS = frozenset(info.key for info in KEY_TABLE if info.status == "secret")


def migrate_kaas_v1(
    text: str,
    *,
    name: str = DEFAULT_NAME,
    prefix: str = DEFAULT_PREFIX,
    file: str = "clusterctl.yaml",
    proxy_profile: str | None = None,
    proxy_file: str = "proxy.sh",
) -> MigrationResult:
    """Migrate the text of a KaaS v1 ``clusterctl.yaml`` into a ClusterSettings document.

    ``proxy_profile`` is the text of the management host's ``/etc/profile.d/proxy.sh``
    (``proxy_file`` its name in messages): its proxy variables become
    ``spec.network.proxy``.

    Raises :class:`InputError` (exit code 2) when the text is not such a file, when a value
    of a known key has the wrong shape (``FILE:LINE: KEY: message``, one line per problem),
    or when the result would not validate. Secret values never appear in any message.
    """

    entries = read_entries(text, file, _SECRET_KEYS)
    if not any(entry.key in KEYS for entry in entries):
        raise InputError(
            f"{file}: no KaaS v1 settings found (expected keys such as KUBERNETES_VERSION "
            "and WORKER_MACHINE_COUNT)"
        )
    migration = Migration(entries, file=file, name=name, prefix=prefix)
    _migrate_keys(migration)
    proxy_cmd = migration.entries.get("PROXY_CMD")
    if proxy_profile is not None:
        apply_proxy_profile(migration, parse_proxy_profile(proxy_profile, proxy_file), proxy_file)
    elif proxy_cmd is not None and proxy_cmd.kind == "scalar" and (proxy_cmd.text or "").strip():
        migration.notes.append(
            "PROXY_CMD is set: the cluster used the management host's proxy; pass "
            "--proxy-profile /etc/profile.d/proxy.sh to carry it over"
        )
    migration.doc.header(migration.header(file))
    output = dump(migration.doc.root)
    try:
        loaded = parse_settings_text(output, file="<migrated>")
    except SettingsError as error:
        raise InputError(
            "\n".join(
                _locate(migration, problem.path, problem.message) for problem in error.problems
            )
        ) from None
    for warning in loaded.warnings:
        key = migration.source(warning.path)
        message = f"{format_path(warning.path)}: {warning.message}"
        if key is not None and key in migration.reports:
            old = migration.reports[key]
            migration.reports[key] = old._replace(detail=f"{old.detail} (warning: {message})")
        else:
            migration.notes.append(message)
    entries_by_key = {entry.key: entry for entry in entries}
    report = [migration.reports[entry.key] for entry in entries if entry.key in migration.reports]
    assert len(report) == len(entries_by_key), "every input key must be reported"
    return MigrationResult(migration.doc.root, output, report, migration.notes)


def _migrate_keys(migration: Migration) -> None:
    """Every row of the key table on its input entry, in table order; then the unknown keys
    and the defaults of missing keys. All shape problems are raised together."""
    migration.start()
    for info in KEY_TABLE:
        entry = migration.entries.get(info.key)
        if entry is None:
            continue
        try:
            if info.migrate is not None:
                info.migrate(migration, entry, info)
            else:
                migration.report(info.key, info.status, info.note)
        except Problem as problem:
            migration.problems.append(f"{migration.file}:{entry.line}: {info.key}: {problem}")
    for key in migration.order:
        if key not in KEYS:
            hint = did_you_mean(key, list(KEYS))
            migration.report(key, "unknown", f"not a KaaS v1 clusterctl.yaml key; ignored{hint}")
    for info in KEY_TABLE:
        if info.when_missing is not None and not migration.doc.has(info.path):
            note = f"{info.key} is missing: the KaaS v1 default {info.when_missing} is used"
            migration.doc.set(info.path, info.when_missing, comment="KaaS v1 default", notes=[note])
            migration.notes.append(note)
    migration.doc.prune()
    if migration.problems:
        raise InputError("\n".join(migration.problems))


def _locate(migration: Migration, path: Path, message: str) -> str:
    """A validation problem of the migrated document, worded by the input that caused it."""
    key = migration.source(path)
    if key is not None:
        entry = migration.entries[key]
        return f"{migration.file}:{entry.line}: {key}: {message}"
    if path[:2] == ("metadata", "name"):
        return f"--name: {message}"
    if path == ("spec", "workers", 0, "name"):
        return f"--name/--prefix: {message}"
    if path[:2] == ("spec", "prefix"):
        return f"--prefix: {message}"
    dotted = format_path(path)
    for info in KEY_TABLE:
        if info.target == dotted:
            return f"{migration.file}: {info.key} (not set; the default {dotted}): {message}"
    return f"{migration.file}: migrated {dotted}: {message}"
