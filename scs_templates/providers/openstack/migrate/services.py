"""The KaaS v1 ``DEPLOY_*``/``USE_CILIUM``/``CALICO_VERSION`` keys -> ``spec.services``.

A service key is ``true``/``false``, a manifest version ``vX.Y.Z`` or ``master``
(:func:`~.shapes.service_value`); it becomes the service's ``enabled`` and ``version`` at the
key table's target. Some services add their own notes (the handlers below say which).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._settings.problems import format_path
from scs_templates.providers.openstack.migrate.shapes import (
    SERVICE_VERSION,
    Problem,
    scalar,
    service_value,
)

if TYPE_CHECKING:
    from scs_templates.providers.openstack.migrate.migration import KeyInfo, Migration
    from scs_templates.providers.openstack.migrate.reading import Entry

#: Said by migrate when KaaS v1 deployed ingress-nginx (also a settings warning).
INGRESS_NGINX_DEPRECATION = (
    "ingress-nginx is deprecated (retired upstream, no security fixes since March 2026): "
    "plan the move to spec.services.gatewayAPI"
)


def service(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """``true``/``false``/``vX.Y.Z``/``master`` -> the service's enabled and version."""
    _service(m, entry, info)


def cloud_controller_manager(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """As :func:`service`, but ``false`` is emitted enabled: nodes need the controller."""
    _service(m, entry, info, must_stay_enabled=True)


def gateway_api(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """As :func:`service`; with Calico a note says Envoy Gateway implements it."""
    _service(m, entry, info, calico_note=True)


def ingress_nginx(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """As :func:`service`; enabled gets the deprecation note (in the file and the report)."""
    _service(m, entry, info, deprecated=True)


def _service(
    m: Migration,
    entry: Entry,
    info: KeyInfo,
    *,
    must_stay_enabled: bool = False,
    calico_note: bool = False,
    deprecated: bool = False,
) -> None:
    value = service_value(entry)
    base = info.path
    target = format_path(base)
    if value is None:
        m.empty(info, "the default is kept")
        return
    notes = list(value.notes)
    enabled = value.enabled
    if must_stay_enabled and not enabled:
        enabled = True
        notes.append(
            "false is not possible: the OpenStack cloud controller manager must stay "
            "enabled (nodes stay uninitialized without it); emitted enabled"
        )
    if calico_note and enabled and m.cni != "cilium":
        notes.append(
            "with Calico the Gateway API implementation is Envoy Gateway (KaaS v1 had "
            "Cilium's only)"
        )
    if deprecated and enabled:
        notes.append(INGRESS_NGINX_DEPRECATION)
        m.notes.append(f"{entry.key}: {INGRESS_NGINX_DEPRECATION}")
    m.set((*base, "enabled"), enabled, entry.key, notes)
    targets = f"{target}.enabled"
    if value.version is not None and enabled:
        m.set((*base, "version"), value.version, entry.key)
        targets += f", {target}.version"
    m.mapped(entry.key, targets, notes)


def cilium(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """``USE_CILIUM``: ``true``/``vX.Y.Z`` -> cni type cilium (and version), ``false`` -> calico."""
    value = service_value(entry)
    if value is None:
        m.empty(info, "Cilium, the default, is kept")
        return
    base = info.path
    target = format_path(base)
    m.cni = "cilium" if value.enabled else "calico"
    m.set((*base, "type"), m.cni, entry.key, list(value.notes))
    targets = f"{target}.type"
    if value.version is not None:
        m.set((*base, "version"), value.version, entry.key)
        targets += f", {target}.version"
    m.mapped(entry.key, targets, list(value.notes))


def calico(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """``CALICO_VERSION``: the cni version, only when ``USE_CILIUM`` chose Calico."""
    text = scalar(entry)
    if m.cni != "calico":
        m.report(entry.key, "ignored", "only used with Calico; USE_CILIUM selects Cilium")
        return
    if text is None:
        m.empty(info, "the tested default Calico version is used")
        return
    if not SERVICE_VERSION.match(text):
        raise Problem(f"expected a version such as v3.27.3, found {text!r}")
    m.map_to(info, text)
