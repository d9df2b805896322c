# One module over 500 lines: every preflight check of the cloud, each a small generator
# over one shared context, in the order `openstack preflight` prints them.
"""Preflight checks: does the cloud fit the settings, before anything is installed?

Each check yields a :class:`CheckResult` (ok / failed / skipped). A failed result also says
whether the fix belongs in the settings (``in_settings``: a value written in the settings names
something missing or conflicting) or in the cloud. The CLI exits 2 when any failure is in the
settings, 1 when only the cloud's state is at fault, 0 when nothing failed.

The names CAPO gives the cluster's network and security groups:
:mod:`scs_templates.providers.openstack.capo_names`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from scs_templates._versions.kubernetes import parse_version
from scs_templates.providers.openstack.capo_names import (
    CAPO_SECGROUP_DESCRIPTION,
    capo_description,
    capo_network_name,
    capo_security_group_names,
    capo_security_group_pattern,
)
from scs_templates.providers.openstack.connection import (
    CallAbandoned,
    error_summary,
    has_service,
)
from scs_templates.providers.openstack.section import section

if TYPE_CHECKING:
    from openstack.connection import Connection

    from scs_templates._settings.loader import Positions
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._settings.problems import Path as FieldPath

Status = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: Status
    message: str
    in_settings: bool = False
    """For a failure: the fix belongs in the settings file (exit 2), not in the cloud."""

    @property
    def line(self) -> str:
        return f"{self.status:<7} {self.name}: {self.message}"


@dataclass(frozen=True)
class PreflightReport:
    results: tuple[CheckResult, ...]
    external_network_id: str | None = None
    """The external network found (given or auto-detected), for the caller's use."""

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(result for result in self.results if result.status == "failed")

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def exit_code(self) -> int:
        if not self.failed:
            return 0
        return 2 if any(result.in_settings for result in self.failed) else 1


@dataclass
class _Context:
    conn: Any
    settings: ClusterSettings
    project_id: str
    file: str = ""
    positions: Positions = field(default_factory=dict)
    external_network_id: str | None = None
    #: The file (or ``--set PATH``) each positioned path came from, for layered settings.
    origins: Mapping[FieldPath, str] = field(default_factory=dict)
    results: list[CheckResult] = field(default_factory=list)
    _flavor_list: list[Any] | None = field(default=None, repr=False)
    _images_by_name: dict[str, list[Any]] = field(default_factory=dict, repr=False)

    def flavors(self) -> list[Any]:
        """The flavors the project can use (``GET /flavors/detail``), listed once for all
        the checks that compare them."""
        if self._flavor_list is None:
            self._flavor_list = list(self.conn.compute.flavors(details=True))
        return self._flavor_list

    def images_named(self, name: str) -> list[Any]:
        """The images of that name the project sees (``GET /v2/images?name=``), by ID,
        listed once for all the checks that look at them."""
        if name not in self._images_by_name:
            found = self.conn.image.images(name=name)
            self._images_by_name[name] = sorted(found, key=lambda i: str(i.id))
        return self._images_by_name[name]

    def at(self, path: FieldPath) -> str:
        """``FILE:LINE`` of the setting at ``path`` (or of the nearest written parent: a
        default has no line of its own), empty without a file."""
        if not self.file:
            return ""
        while path:
            if path in self.positions:
                where = self.origins.get(path, self.file)
                line = self.positions[path][0]
                return f"{where}:{line}" if line else where
            path = path[:-1]
        return self.file


def run_preflight(
    conn: Connection,
    settings: ClusterSettings,
    *,
    file: str = "",
    positions: Positions | None = None,
    origins: Mapping[FieldPath, str] | None = None,
) -> PreflightReport:
    """Run every check; a check that errors becomes a failed result, the others still run;
    a call abandoned after ``--timeout`` ends the preflight (:class:`CallAbandoned`).

    ``file``, ``positions`` and ``origins`` (of
    :class:`~scs_templates._settings.validate.LoadedSettings`) let a failure point at the
    line of the setting to change (in the file, or ``--set PATH``, that set it)."""
    context = _Context(
        conn, settings, str(conn.current_project_id), file, positions or {}, origins=origins or {}
    )
    checks: list[tuple[str, Callable[[_Context], Iterator[CheckResult]]]] = [
        ("external-network", _external_network),
        ("node-cidr", _node_cidr),
        ("names", _names),
        ("flavors", _flavors),
        ("images", _images),
        ("image-fit", _image_fit),
        ("ssh-key", _ssh_key),
        ("load-balancer-provider", _load_balancer_provider),
    ]
    for name, check in checks:
        try:
            context.results.extend(check(context))
        except CallAbandoned:
            raise
        except Exception as error:
            context.results.append(
                CheckResult(name, "failed", f"could not check: {error_summary(error)}")
            )
    return PreflightReport(tuple(context.results), context.external_network_id)


def _find(finder: Callable[..., Any], name_or_id: str) -> Any | None:
    """``find_*`` of openstacksdk, None when not found (without the deprecated
    ``ignore_missing=True``)."""
    from openstack import exceptions  # deferred: openstack

    try:
        return finder(name_or_id, ignore_missing=False)
    except exceptions.NotFoundException:
        return None


# --------------------------------------------------------------------------- network


def _external_network(ctx: _Context) -> Iterator[CheckResult]:
    name = "external-network"
    network_api = ctx.conn.network
    given = section(ctx.settings).external_network_id
    if given:
        network = _find(network_api.find_network, given)
        if network is None or network.id != given:
            yield CheckResult(
                name,
                "failed",
                f"spec.openstack.externalNetworkID {given} does not exist (or is not visible "
                "to this project)",
                in_settings=True,
            )
            return
        if not network.is_router_external:
            yield CheckResult(
                name,
                "failed",
                f"spec.openstack.externalNetworkID {given} ({network.name}) is not an external "
                "network (router:external is false)",
                in_settings=True,
            )
            return
        ctx.external_network_id = network.id
        yield CheckResult(name, "ok", f"{network.name} ({network.id})")
        return
    external = sorted(network_api.networks(is_router_external=True), key=lambda n: n.name or "")
    if len(external) == 1:
        ctx.external_network_id = external[0].id
        yield CheckResult(name, "ok", f"auto-detected {external[0].name} ({external[0].id})")
    elif not external:
        yield CheckResult(
            name,
            "failed",
            "no external network (router:external) is visible to this project; ask the cloud "
            "operator, or set spec.openstack.externalNetworkID",
        )
    else:
        listing = ", ".join(f"{n.name} ({n.id})" for n in external)
        yield CheckResult(
            name,
            "failed",
            f"{len(external)} external networks, cannot pick one: {listing}; set "
            "spec.openstack.externalNetworkID to one of them",
        )


def _node_cidr(ctx: _Context) -> Iterator[CheckResult]:
    name = "node-cidr"
    text = ctx.settings.spec.network.node_cidr
    try:
        node_net = ipaddress.ip_network(text, strict=False)
    except ValueError:
        yield CheckResult(
            name, "failed", f"spec.network.nodeCIDR {text!r} is not a network", in_settings=True
        )
        return
    own_name = capo_network_name(ctx.settings)
    own_ids = {
        net.id for net in ctx.conn.network.networks(name=own_name, project_id=ctx.project_id)
    }
    collisions = []
    for subnet in ctx.conn.network.subnets(project_id=ctx.project_id):
        if subnet.network_id in own_ids or not subnet.cidr:
            continue
        other = ipaddress.ip_network(subnet.cidr, strict=False)
        if other.version == node_net.version and other.overlaps(node_net):
            collisions.append(f"{subnet.name or '(no name)'} {subnet.cidr} ({subnet.id})")
    if collisions:
        yield CheckResult(
            name,
            "failed",
            f"spec.network.nodeCIDR {text} overlaps subnet(s) of the project: "
            + ", ".join(sorted(collisions))
            + "; choose another nodeCIDR",
            in_settings=True,
        )
    else:
        yield CheckResult(name, "ok", f"{text} does not overlap any other subnet of the project")


def _names(ctx: _Context) -> Iterator[CheckResult]:
    """Networks/subnets/security groups with CAPO's names for THIS cluster must be CAPO's own
    (its description) and unique; otherwise CAPO would adopt or trip over them."""
    name = "names"
    network_api = ctx.conn.network
    problems: list[str] = []
    own = capo_network_name(ctx.settings)
    description = capo_description(ctx.settings)
    for kind, items in (
        ("network", list(network_api.networks(name=own, project_id=ctx.project_id))),
        ("subnet", list(network_api.subnets(name=own, project_id=ctx.project_id))),
    ):
        if len(items) > 1:
            problems.append(f"{len(items)} {kind}s named {own} (CAPO expects at most one)")
        for item in items:
            if (item.description or "") != description:
                problems.append(
                    f"{kind} {own} ({item.id}) was not created by CAPO for this cluster "
                    f"(description {item.description!r})"
                )
    for group_name in capo_security_group_names(ctx.settings):
        groups = list(network_api.security_groups(name=group_name, project_id=ctx.project_id))
        if len(groups) > 1:
            problems.append(f"{len(groups)} security groups named {group_name}")
        for group in groups:
            if (group.description or "") != CAPO_SECGROUP_DESCRIPTION:
                problems.append(
                    f"security group {group_name} ({group.id}) was not created by CAPO "
                    f"(description {group.description!r})"
                )
    if problems:
        yield CheckResult(
            name,
            "failed",
            "; ".join(problems) + ": rename or delete them, or pick another cluster name/namespace",
        )
    else:
        pattern = capo_security_group_pattern(ctx.settings)
        yield CheckResult(
            name, "ok", f"no foreign network/subnet {own} or security groups {pattern}"
        )


# --------------------------------------------------------------------------- compute / image


def _not_checked(name: str, service: str) -> CheckResult:
    return CheckResult(
        name, "skipped", f"not checked: no {service} endpoint in the service catalog"
    )


@dataclass(frozen=True)
class _Machine:
    """One machine group of the settings (the control plane, each worker group) as the
    compute and image checks see it; ``flavor`` is its machineType, if any."""

    who: str
    path: FieldPath
    flavor: str | None
    image: str
    root_disk_gb: int


def _machines(settings: ClusterSettings) -> list[_Machine]:
    """The control plane, then each worker group in the settings' order."""
    spec = settings.spec
    resolve = _image_resolver(settings)
    plane = spec.control_plane
    machines = [
        _Machine(
            "controlPlane",
            ("spec", "controlPlane"),
            plane.machine_type,
            resolve(plane.image),
            plane.root_disk_gb,
        )
    ]
    for index, group in enumerate(spec.workers):
        machines.append(
            _Machine(
                f"workers[{group.name}]",
                ("spec", "workers", index),
                group.machine_type,
                resolve(group.image),
                group.root_disk_gb,
            )
        )
    return machines


def _flavors(ctx: _Context) -> Iterator[CheckResult]:
    """Each machineType must be the NAME of a flavor the project can use: the chart renders it
    as the OpenStackMachine's ``flavor``, which CAPO v0.14.7 resolves by name only
    (pkg/cloud/services/compute/instance.go, GetFlavorID: lists the flavors and compares
    ``flavor.Name``; "no flavors were found: name=..."), so a flavor ID that Nova would find
    fails there. A flavor without a disk (``disk: 0``) cannot boot from an image unless the
    machine gets a root volume (rootDiskGB): Nova refuses image-backed servers on zero-disk
    flavors to non-admins (policy ``os_compute_api:servers:create:zero_disk_flavor``)."""
    name = "flavors"
    wanted: dict[str, list[str]] = {}
    root_disk: dict[str, list[int]] = {}
    for machine in _machines(ctx.settings):
        if machine.flavor:
            wanted.setdefault(machine.flavor, []).append(machine.who)
            root_disk.setdefault(machine.flavor, []).append(machine.root_disk_gb)
    if not wanted:
        yield CheckResult(name, "skipped", "no machineType in the settings")
        return
    if not has_service(ctx.conn, "compute"):
        yield _not_checked(name, "compute")
        return
    flavors = ctx.flavors()
    by_name = {str(f.name): f for f in flavors}
    by_id = {str(f.id): f for f in flavors}
    problems = []
    for flavor, users in wanted.items():
        used_by = f"used by {', '.join(users)}"
        found = by_name.get(flavor)
        if found is None:
            if flavor in by_id:
                problems.append(
                    f"{flavor} is the ID of flavor {by_id[flavor].name}, not a name ({used_by}; "
                    "CAPO looks flavors up by name: set the name)"
                )
            else:
                problems.append(f"{flavor} not found ({used_by})")
            continue
        if not found.disk and 0 in root_disk[flavor]:
            problems.append(
                f"{flavor} has no disk (disk 0) and no rootDiskGB is set ({used_by}; Nova "
                "boots from an image only onto a flavor disk: set rootDiskGB)"
            )
    if problems:
        yield CheckResult(name, "failed", "flavor(s): " + "; ".join(problems), in_settings=True)
    else:
        yield CheckResult(name, "ok", "found: " + ", ".join(sorted(wanted)))


def _image_resolver(settings: ClusterSettings) -> Callable[[str | None], str]:
    """A machine's image name: its override or ``spec.openstack.image``, with ``{version}``
    replaced by the resolved Kubernetes version."""

    spec = settings.spec
    try:
        version = str(parse_version(spec.kubernetes.version))
    except ValueError:
        version = spec.kubernetes.version
    default = section(settings).image

    def resolve(image: str | None) -> str:
        return (image or default).replace("{version}", version)

    return resolve


def image_names(settings: ClusterSettings) -> dict[str, list[str]]:
    """Image name -> who uses it, with ``{version}`` replaced by the resolved version."""
    images: dict[str, list[str]] = {}
    for machine in _machines(settings):
        images.setdefault(machine.image, []).append(machine.who)
    return images


def _images(ctx: _Context) -> Iterator[CheckResult]:
    """Each image must be the NAME of exactly one image the project sees: the chart renders
    ``image: {filter: {name: ...}}``, and CAPO v0.14.7 lists the images with that name and
    takes the one (pkg/cloud/services/compute/instance.go, GetImageID: "no images were found
    with the given image filter" for none, "too many images were found" for several), so an
    image ID or a name shared by two images fails there. The image must also be ``active``
    (uploaded): Nova boots from nothing else."""
    name = "images"
    wanted = image_names(ctx.settings)
    if not has_service(ctx.conn, "image"):
        yield _not_checked(name, "image")
        return
    in_settings: list[str] = []
    in_cloud: list[str] = []
    for image, users in wanted.items():
        used_by = f"used by {', '.join(users)}"
        found = ctx.images_named(image)
        if len(found) > 1:
            ids = ", ".join(f"{i.id} ({i.visibility})" for i in found)
            in_cloud.append(
                f"{image} is ambiguous: {len(found)} images have this name: {ids} ({used_by}; "
                "CAPO refuses a name that matches several: rename or delete all but one)"
            )
        elif not found:
            by_id = _find(ctx.conn.image.find_image, image)
            if by_id is not None and by_id.id == image:
                in_settings.append(
                    f"{image} is the ID of image {by_id.name}, not a name ({used_by}; CAPO looks "
                    "images up by name: set the name)"
                )
            else:
                in_settings.append(f"{image} not found ({used_by})")
        elif found[0].status != "active":
            in_cloud.append(
                f"{image} ({found[0].id}) is {found[0].status}, not active ({used_by}; "
                "upload its data)"
            )
    problems = in_settings + in_cloud
    if problems:
        hint = (
            " (upload them or set spec.openstack.image / the image overrides)"
            if in_settings
            else ""
        )
        yield CheckResult(
            name,
            "failed",
            "image(s): " + "; ".join(problems) + hint,
            in_settings=bool(in_settings),
        )
    else:
        yield CheckResult(name, "ok", "found: " + ", ".join(sorted(wanted)))


_GIB = 1024**3


def _gib(size: int) -> int:
    """Bytes as whole GiB, rounded up (as Cinder rounds an image's size)."""
    return (size + _GIB - 1) // _GIB


def _misfits(machine: _Machine, flavor: Any, image: Any) -> list[str]:
    """Why Nova (or Cinder, for the root volume CAPO creates) would refuse this machine.

    The rules are Nova 34.0.0's ``nova/compute/api.py`` (``_validate_flavor_image_nostatus``,
    ``_detect_nonbootable_image_from_properties``) and Cinder 29.0.0's
    ``cinder/volume/volume_utils.py`` (``check_image_metadata``): CAPO v0.14.7 with
    ``rootVolume`` (our rootDiskGB) creates the root volume from the image in Cinder first and
    boots from that volume, without it Nova copies the image onto the flavor's disk."""
    found = []
    min_ram = int(image.min_ram or 0)
    if int(flavor.ram or 0) < min_ram:
        found.append(
            f"flavor {machine.flavor} has {flavor.ram} MiB of RAM, image {machine.image} needs "
            f"{min_ram} MiB (its min_ram; Nova: FlavorMemoryTooSmall)"
        )
    min_disk = int(image.min_disk or 0)
    size = int(image.size or 0)
    virtual = int(image.virtual_size or 0)
    if machine.root_disk_gb:
        volume = machine.root_disk_gb
        if volume < min_disk:
            found.append(
                f"rootDiskGB {volume} is smaller than image {machine.image}'s min_disk "
                f"{min_disk} GiB (Cinder refuses the root volume)"
            )
        if _gib(size) > volume:
            found.append(
                f"rootDiskGB {volume} cannot hold image {machine.image} of {_gib(size)} GiB "
                f"({size} bytes; Cinder refuses the root volume)"
            )
        elif _gib(virtual) > volume:
            found.append(
                f"rootDiskGB {volume} cannot hold image {machine.image}'s virtual size "
                f"{_gib(virtual)} GiB (Cinder refuses the root volume)"
            )
        return found
    if (image.properties or {}).get("cinder_encryption_key_id"):
        found.append(
            f"image {machine.image} was uploaded from an encrypted volume "
            "(cinder_encryption_key_id): Nova boots it only from a volume "
            "(ImageUnacceptable): set rootDiskGB"
        )
    disk = int(flavor.disk or 0)
    if disk:  # disk 0: the flavors check reports it (no rootDiskGB either)
        if size > disk * _GIB:
            found.append(
                f"flavor {machine.flavor}'s disk of {disk} GiB cannot hold image "
                f"{machine.image} of {size} bytes (Nova: FlavorDiskSmallerThanImage)"
            )
        if min_disk > disk:
            found.append(
                f"flavor {machine.flavor}'s disk of {disk} GiB is smaller than image "
                f"{machine.image}'s min_disk {min_disk} GiB (Nova: FlavorDiskSmallerThanMinDisk)"
            )
    return found


def _image_fit(ctx: _Context) -> Iterator[CheckResult]:
    """Each machine's image must fit its flavor (and its root volume): Nova refuses the
    server at once otherwise, and CAPO then only records the error in a condition (reason
    ``InstanceCreateFailed``) and retries; the cluster never gets the machine. The flavor's
    RAM against the image's ``min_ram``; the root volume (rootDiskGB) or else the flavor's
    disk against the image's ``min_disk`` and size; an image uploaded from an encrypted
    volume boots only from a volume. Only machines whose flavor and image the other checks
    found (a name, one active image) are compared; each failure names the machine and the
    line of its settings."""
    name = "image-fit"
    machines = [machine for machine in _machines(ctx.settings) if machine.flavor]
    if not machines:
        yield CheckResult(name, "skipped", "no machineType in the settings")
        return
    for service in ("compute", "image"):
        if not has_service(ctx.conn, service):
            yield _not_checked(name, service)
            return
    flavors = {str(f.name): f for f in ctx.flavors()}
    problems = []
    compared = []
    for machine in machines:
        flavor = flavors.get(str(machine.flavor))
        found = ctx.images_named(machine.image)
        if flavor is None or len(found) != 1 or found[0].status != "active":
            continue  # the flavors or images check reports it
        image = found[0]
        compared.append(machine.who)
        where = ctx.at(machine.path)
        for misfit in _misfits(machine, flavor, image):
            problems.append(f"{where + ': ' if where else ''}{machine.who}: {misfit}")
    if problems:
        yield CheckResult(
            name,
            "failed",
            "; ".join(problems) + " (choose a larger flavor or rootDiskGB, or another image)",
            in_settings=True,
        )
    elif compared:
        yield CheckResult(name, "ok", "images fit: " + ", ".join(compared))
    else:
        yield CheckResult(name, "skipped", "no machine with a found flavor and image to compare")


def _ssh_key(ctx: _Context) -> Iterator[CheckResult]:
    name = "ssh-key"
    key = section(ctx.settings).ssh_key_name
    if not key:
        yield CheckResult(name, "skipped", "no spec.openstack.sshKeyName")
        return
    if not has_service(ctx.conn, "compute"):
        yield _not_checked(name, "compute")
        return
    if _find(ctx.conn.compute.find_keypair, key) is None:
        yield CheckResult(
            name, "failed", f"keypair {key} not found for this user", in_settings=True
        )
    else:
        yield CheckResult(name, "ok", f"keypair {key} exists")


# --------------------------------------------------------------------------- load balancer


def _load_balancer_provider(ctx: _Context) -> Iterator[CheckResult]:
    """The Octavia provider the settings ask for must be one the cloud offers.

    CAPO v0.14.7 does not fail on a provider Octavia does not list: it records an
    ``OctaviaProviderNotFound`` event (reason ``Octaviaprovidernotfound``: CAPO's recorder
    title-cases reasons) and creates the API load balancer with the cloud's DEFAULT provider
    (pkg/cloud/services/loadbalancer/loadbalancer.go,
    getOrCreateAPILoadBalancer; seen with the real CAPO in tests/cloud/test_plane_capo_rotation.py).
    For ``ovn`` with a restricted apiAccess that is an open API: the chart renders no
    allowedCIDRs for ovn (the security-group rules restrict instead), and an amphora
    forwards every client from its own address in the node CIDR, which the rules allow.
    """
    name = "load-balancer-provider"
    wanted = section(ctx.settings).load_balancer_provider
    if not has_service(ctx.conn, "load-balancer"):
        yield _not_checked(name, "load-balancer")
        return
    offered = sorted(str(provider.name) for provider in ctx.conn.load_balancer.providers())
    if wanted in offered:
        yield CheckResult(name, "ok", f"{wanted} is offered (offered: {', '.join(offered)})")
        return
    mode = ctx.settings.spec.network.api_access.mode
    consequence = f"; apiAccess {mode} would not hold" if mode != "open" else ""
    yield CheckResult(
        name,
        "failed",
        f"spec.openstack.loadBalancerProvider {wanted} is not offered by this cloud's Octavia "
        f"(offered: {', '.join(offered) or 'none'}): CAPO would make the API load balancer "
        f"with the default provider instead, saying so only in an event{consequence}",
        in_settings=True,
    )
