"""The node side read by the programs that run it (issue #40, item 7).

Render tier (no plane): every file the rendered bootstrap specs of every example write onto
nodes (KubeadmControlPlane, KubeadmConfigTemplate and, for ``clusterclass``, the Cluster's
topology variables) is extracted; each shell script (a ``#!`` file) and each list of
pre/postKubeadmCommands (cloud-init runs them with ``/bin/sh``) passes ``shellcheck``; each
systemd unit and drop-in passes ``systemd-analyze verify``, in a root of its own that holds
the host's system units, our files with their permissions, and only the few units and
programs a node image brings (:data:`IMAGE_UNITS`, :data:`IMAGE_PROGRAMS`): an ``ExecStart``
of a script we do not write, an unknown key, a timer whose service is missing or a bad
``OnCalendar`` fails it.

etcd-defrag.sh against a real etcd: tests/plane/test_node_etcd_defrag.py (``extra_builds``).

The tools come from Debian (``shellcheck``, ``systemd``'s systemd-analyze, ``cloud-init``):
``make node-tools`` installs them in CI (docs/testing.md); elsewhere their tests skip with
the command to run, in CI they fail.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scs_templates import api
from tests.support import EXAMPLES, pinned_helm, skip_or_fail

TOOL_TIMEOUT = 120.0
#: Units a node image brings that our drop-ins extend (image-builder's containerd and the
#: kubelet unit of the kubeadm packages) -> their ExecStart.
IMAGE_UNITS = {
    "containerd.service": "/usr/local/bin/containerd",
    "kubelet.service": "/usr/bin/kubelet",
}
#: Programs of the node image that our own units start.
IMAGE_PROGRAMS = ("/bin/mount",)
SYSTEMD_DIR = "/etc/systemd/system/"
#: Debian package of each tool (`make node-tools`).
PACKAGES = {"shellcheck": "shellcheck", "systemd-analyze": "systemd", "cloud-init": "cloud-init"}


def tool(name: str) -> str:
    """The path of ``name`` (skip, or fail in CI, when it is not installed)."""
    found = shutil.which(name)
    if found is None:
        skip_or_fail(
            f"{name} is not installed: `make node-tools` (apt-get install {PACKAGES[name]})"
        )
        raise AssertionError  # unreachable: skip_or_fail raises
    return found


@dataclass(frozen=True)
class NodeFile:
    path: str
    content: str
    permissions: str


def bootstrap_specs(objects: Any) -> Iterator[dict[str, Any]]:
    """Every KubeadmConfigSpec-like mapping (one with ``files``) in the rendered objects,
    wherever it is: a KubeadmControlPlane's, a KubeadmConfigTemplate's, a topology
    variable's value."""
    if isinstance(objects, dict):
        if isinstance(objects.get("files"), list):
            yield objects
        for value in objects.values():
            yield from bootstrap_specs(value)
    elif isinstance(objects, (list, tuple)):
        for value in objects:
            yield from bootstrap_specs(value)


def node_files(objects: Any) -> list[NodeFile]:
    """The distinct inline files of every bootstrap spec (from Secrets: not ours to check)."""
    found = {
        NodeFile(f["path"], f["content"], f.get("permissions", "0644"))
        for spec in bootstrap_specs(objects)
        for f in spec["files"]
        if "content" in f
    }
    return sorted(found, key=lambda f: (f.path, f.content))


def command_lists(objects: Any) -> list[list[str]]:
    """The distinct pre/postKubeadmCommands lists of every bootstrap spec."""
    lists = {
        tuple(spec[key])
        for spec in bootstrap_specs(objects)
        for key in ("preKubeadmCommands", "postKubeadmCommands")
        if spec.get(key)
    }
    return [list(c) for c in sorted(lists)]


@pytest.fixture(scope="module")
def rendered() -> dict[str, Any]:
    """example stem -> its rendered objects."""
    helm = pinned_helm()
    return {
        example.stem: api.render(api.load_settings(example).settings, helm=helm).objects
        for example in EXAMPLES
    }


def run_tool(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, timeout=TOOL_TIMEOUT, check=False
    )


def _shellcheck(script: Path) -> subprocess.CompletedProcess[str]:
    """shellcheck at its default severity (style and up), GCC-style lines."""
    return run_tool([tool("shellcheck"), "--format=gcc", str(script)])


@pytest.mark.parametrize("example", [e.stem for e in EXAMPLES])
def test_node_shell_scripts_pass_shellcheck(
    rendered: dict[str, Any], example: str, tmp_path: Path
) -> None:
    """Every script we write onto nodes, and the commands cloud-init runs with /bin/sh."""
    scripts = [f for f in node_files(rendered[example]) if f.content.startswith("#!")]
    commands = command_lists(rendered[example])
    assert scripts or commands or example.startswith("docker-clusterclass"), example
    for index, entry in enumerate(scripts):
        script = tmp_path / f"{index}-{Path(entry.path).name}"
        script.write_text(entry.content)
        done = _shellcheck(script)
        assert done.returncode == 0 and not done.stdout, f"{entry.path}:\n{done.stdout}"
        assert entry.permissions == "0755", entry.path
    for index, lines in enumerate(commands):
        script = tmp_path / f"commands-{index}.sh"
        script.write_text("#!/bin/sh\n" + "".join(f"{line}\n" for line in lines))
        done = _shellcheck(script)
        assert done.returncode == 0 and not done.stdout, f"{lines}:\n{done.stdout}"


def test_shellcheck_finds_what_it_should(tmp_path: Path) -> None:
    """The check can fail: an unquoted expansion in a script is reported."""
    script = tmp_path / "bad.sh"
    script.write_text("#!/bin/bash\nset -eu\nrm -f $1\n")
    done = _shellcheck(script)
    assert done.returncode != 0 and "SC2086" in done.stdout, done.stdout


def node_root(files: list[NodeFile], root: Path) -> Path:
    """A file tree for ``systemd-analyze verify --root``: the host's system units (so that
    timers.target, multi-user.target ... exist), the node image's units and programs of
    :data:`IMAGE_UNITS` and :data:`IMAGE_PROGRAMS` (stubs), and our files with their
    permissions."""
    units = root / "usr/lib/systemd/system"
    shutil.copytree("/usr/lib/systemd/system", units, symlinks=True)

    def program(path: str) -> None:
        stub = root / path.lstrip("/")
        stub.parent.mkdir(parents=True, exist_ok=True)
        stub.write_text("#!/bin/sh\n")
        stub.chmod(0o755)

    for unit, exec_start in IMAGE_UNITS.items():
        (units / unit).write_text(
            f"[Unit]\nDescription=image's {unit}\n\n[Service]\nExecStart={exec_start}\n"
        )
        program(exec_start)
    for path in IMAGE_PROGRAMS:
        program(path)
    for entry in files:
        target = root / entry.path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(entry.content)
        target.chmod(int(entry.permissions, 8))
    return root


def units_to_verify(files: list[NodeFile]) -> list[str]:
    """Our units, and the image's units our drop-ins extend (verified with the drop-in)."""
    names = set()
    for entry in files:
        if not entry.path.startswith(SYSTEMD_DIR):
            continue
        relative = entry.path.removeprefix(SYSTEMD_DIR)
        names.add(relative.split("/")[0].removesuffix(".d"))
    return sorted(names)


def verify(root: Path, units: list[str]) -> subprocess.CompletedProcess[str]:
    """systemd-analyze verify of ``units`` by name in ``root`` (loads their drop-ins)."""
    return run_tool([tool("systemd-analyze"), "verify", f"--root={root}", *units])


@pytest.mark.parametrize("example", [e.stem for e in EXAMPLES])
def test_node_systemd_units_pass_systemd_analyze_verify(
    rendered: dict[str, Any], example: str, tmp_path: Path
) -> None:
    """Every unit, timer and drop-in we write, with no warning at all."""
    files = node_files(rendered[example])
    units = units_to_verify(files)
    if not units:
        assert example == "docker-clusterclass", f"{example} writes no systemd unit"
        return
    # one root per distinct file set: a control plane's and a worker group's may differ
    # only in files that are not units, which the root holds anyway
    done = verify(node_root(files, tmp_path / "root"), units)
    assert done.returncode == 0 and not (done.stdout + done.stderr).strip(), (
        f"{units}:\n{done.stdout}{done.stderr}"
    )


def test_systemd_analyze_verify_finds_what_it_should(tmp_path: Path) -> None:
    """The check can fail: a typo in a key, a bad calendar, a missing ExecStart program."""
    files = [
        NodeFile(
            f"{SYSTEMD_DIR}a.service",
            "[Service]\nType=oneshot\nExecStart=/usr/local/sbin/none.sh\n",
            "0644",
        ),
        NodeFile(
            f"{SYSTEMD_DIR}a.timer",
            "[Timer]\nOnCalendar=nightly at two\n\n[Install]\nWantedBy=timers.target\n",
            "0644",
        ),
        NodeFile(f"{SYSTEMD_DIR}kubelet.service.d/p.conf", "[Service]\nEnviroment=A=b\n", "0644"),
    ]
    done = verify(node_root(files, tmp_path / "root"), units_to_verify(files))
    said = done.stdout + done.stderr
    assert "/usr/local/sbin/none.sh is not executable" in said, said
    assert "OnCalendar" in said or "calendar" in said.lower(), said
    assert "Unknown key 'Enviroment'" in said, said


@pytest.mark.parametrize(
    "directory",
    [
        "backups",
        "/",
        "/var/lib/etcd",
        "/var/lib/etcd/backups",
        "/mnt/../var/lib/etcd",
        "/mnt/a b",
        "/mnt/$(id)",
        "/mnt/'x'",
    ],
)
def test_etcd_backup_directory_refuses_what_the_script_cannot_use(directory: str) -> None:
    """etcd.backupDirectory goes into etcd-defrag.sh as it is: a relative path, the root,
    etcd's own data directory (or one under it), '..', and anything the shell would read
    (space, $, quotes) are refused, naming the field."""
    from scs_templates._settings.problems import SettingsError
    from tests.support import settings_of

    spec = {"provider": "docker", "etcd": {"backupDirectory": directory}}
    with pytest.raises(SettingsError) as refused:
        settings_of(spec)
    said = str(refused.value)
    assert f"spec.etcd.backupDirectory: {directory!r} " in said, said
    assert "has the wrong format" in said or "must be a directory outside /var/lib/etcd" in said


def test_etcd_backup_directory_reaches_the_script_which_still_passes_shellcheck(
    tmp_path: Path,
) -> None:
    """A directory that outlives the machine (a mount of the node image) is where the
    nightly snapshots go; the default stays /var/backups/etcd."""
    from tests.support import settings_of

    scripts = {}
    for name, etcd in (("default", {}), ("mount", {"backupDirectory": "/mnt/etcd-backups"})):
        settings = settings_of({"provider": "docker", "etcd": etcd})
        objects = api.render(settings, helm=pinned_helm()).objects
        (script,) = {f.content for f in node_files(objects) if f.path.endswith("etcd-defrag.sh")}
        scripts[name] = script
        path = tmp_path / f"{name}.sh"
        path.write_text(script)
        done = _shellcheck(path)
        assert done.returncode == 0 and not done.stdout, done.stdout
    assert "\nBACKUP_DIR=/var/backups/etcd\n" in scripts["default"]
    assert "\nBACKUP_DIR=/mnt/etcd-backups\n" in scripts["mount"]


@pytest.mark.parametrize("example", [e.stem for e in EXAMPLES])
def test_nothing_we_write_onto_nodes_opens_a_jinja_comment(
    rendered: dict[str, Any], example: str
) -> None:
    """cloud-init renders the bootstrap data CABPK writes as a Jinja template (its
    ``## template: jinja`` header): a ``{#`` in a file or command (bash's ``${#array[@]}``)
    opens a Jinja comment and cloud-init fails on the node ("Missing end of comment tag",
    seen by tests/cloud/test_plane_capo_machines.py, which renders it as cloud-init does)."""
    objects = rendered[example]
    texts = [f"{f.path}: {f.content}" for f in node_files(objects)]
    texts += ["\n".join(commands) for commands in command_lists(objects)]
    assert [text.split("\n", 1)[0] for text in texts if "{#" in text] == []
