"""The etcd volume's disk is found by its size, not by a device name (issue #40, defect 2).

CAPO attaches ``etcd.volume`` as an ``additionalBlockDevices`` volume; its device is
``/dev/vdb`` only with virtio-blk images: with ``hw_disk_bus=scsi`` (SCS scs-0102) it is
``/dev/sdX``, and an ephemeral or swap disk shifts it. The control plane's bootstrap data
carries ``scs-etcd-disk.sh`` (chart ``scs.etcdDiskScript``), which picks the one whole disk
of exactly the volume's size without partitions or file system. Here the RENDERED script runs
with bash against stand-in ``lsblk``/``blkid``/``mkfs.ext4``/``mount`` that describe the
disks of a virtio-blk and of a virtio-scsi machine (test doubles: the real tools would
format this machine's disks); its two fixed paths (/etc/fstab, /var/lib/etcd) are moved
into a temporary directory, nothing else of it changes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scs_templates._render.render import render
from tests.support import settings_of, skip_or_fail

GIB = 1024**3
SCRIPT = "/usr/local/sbin/scs-etcd-disk.sh"

#: A stand-in for lsblk, blkid, mkfs.ext4, mount and mountpoint: answers from the disks in
#: $DISKS (JSON: name -> {size, children, fstype}), logs every call to $CALLS.
SHIM = """\
import json, os, sys
tool, args = os.path.basename(sys.argv[0]), sys.argv[1:]
disks = json.load(open(os.environ["DISKS"]))
with open(os.environ["CALLS"], "a") as log:
    log.write(" ".join([tool, *args]) + "\\n")
if tool == "lsblk" and args[0] == "-dbnpo":
    for name, disk in disks.items():
        print(name, "disk", disk["size"])
elif tool == "lsblk" and args[0] == "-npo":
    print(args[-1])
    for child in disks[args[-1]].get("children", []):
        print(child)
elif tool == "blkid" and args[0] == "-L":
    labelled = [n for n, d in disks.items() if d.get("label") == args[1]]
    print(*labelled) if labelled else sys.exit(2)
elif tool == "blkid":
    fstype = disks[args[-1]].get("fstype", "")
    print(fstype) if fstype else sys.exit(2)
elif tool == "mountpoint":
    sys.exit(1)
elif tool == "sleep":
    pass
"""


def etcd_disk_script(size_gib: int = 10) -> str:
    """The script in the rendered KubeadmControlPlane of an OpenStack cluster whose control
    plane has an etcd volume of ``size_gib``; also checks that nothing names a device."""
    settings = settings_of(
        {
            "controlPlane": {"replicas": 3, "machineType": "SCS-2V-4"},
            "workers": [{"name": "workers", "machineType": "SCS-2V-4"}],
            "etcd": {"volume": {"sizeGiB": size_gib}},
        }
    )
    rendered = render(settings)
    assert "/dev/vd" not in rendered.manifests and "diskSetup" not in rendered.manifests
    (kcp,) = [o for o in rendered.objects if o["kind"] == "KubeadmControlPlane"]
    spec = kcp["spec"]["kubeadmConfigSpec"]
    assert spec["preKubeadmCommands"][0] == SCRIPT  # before kubeadm, before anything else
    (script,) = [f["content"] for f in spec["files"] if f["path"] == SCRIPT]
    return str(script)


def run(script: str, tmp_path: Path, disks: dict[str, Any]) -> tuple[int, str, list[str]]:
    """Run ``script`` with bash on the stand-in tools; (exit code, stderr, their calls)."""
    shims = tmp_path / "bin"
    shims.mkdir(exist_ok=True)
    for tool in ("lsblk", "blkid", "mkfs.ext4", "mount", "mountpoint", "sleep"):
        shim = shims / tool
        shim.write_text(f"#!{sys.executable}\n{SHIM}")
        shim.chmod(0o755)
    (tmp_path / "disks.json").write_text(json.dumps(disks))
    calls = tmp_path / "calls"
    calls.write_text("")
    fstab, target = tmp_path / "fstab", tmp_path / "etcd"
    fstab.write_text("")
    moved = script.replace("/etc/fstab", str(fstab)).replace("/var/lib/etcd", str(target))
    bash = shutil.which("bash")
    assert bash is not None
    done = subprocess.run(
        [bash, "-c", moved],
        env={
            "PATH": f"{shims}:/usr/bin:/bin",
            "DISKS": str(tmp_path / "disks.json"),
            "CALLS": str(calls),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stderr, calls.read_text().splitlines()


ROOT = {"size": 20 * GIB, "children": ["p1", "p15"]}


@pytest.mark.parametrize(
    ("disks", "found"),
    [
        # virtio-blk: root vda, the volume vdb
        ({"/dev/vda": ROOT, "/dev/vdb": {"size": 10 * GIB}}, "/dev/vdb"),
        # virtio-scsi with an ephemeral disk of the same size (formatted by Nova) before it,
        # and a bigger empty one: only the empty disk of exactly 10 GiB
        (
            {
                "/dev/sda": ROOT,
                "/dev/sdb": {"size": 10 * GIB, "fstype": "vfat"},
                "/dev/sdc": {"size": 10 * GIB},
                "/dev/sdd": {"size": 11 * GIB},
            },
            "/dev/sdc",
        ),
    ],
)
def test_etcd_volume_is_found_on_virtio_blk_and_virtio_scsi(
    disks: dict[str, Any], found: str, tmp_path: Path
) -> None:
    code, err, calls = run(etcd_disk_script(), tmp_path, disks)
    assert code == 0, err
    assert [c for c in calls if c.startswith(("mkfs", "mount "))] == [
        f"mkfs.ext4 -q -L etcd_data {found}",
        f"mount {found} {tmp_path / 'etcd'}",
    ]
    assert (
        tmp_path / "fstab"
    ).read_text() == f"LABEL=etcd_data {tmp_path / 'etcd'} ext4 defaults 0 2\n"


def test_etcd_volume_formatted_before_is_mounted_as_it_is(tmp_path: Path) -> None:
    """A disk that already carries the label (the script ran before) is never formatted."""
    disks = {"/dev/sda": ROOT, "/dev/sdb": {"size": 10 * GIB, "label": "etcd_data"}}
    code, err, calls = run(etcd_disk_script(), tmp_path, disks)
    assert code == 0, err
    assert not [c for c in calls if c.startswith("mkfs")]
    assert f"mount /dev/sdb {tmp_path / 'etcd'}" in calls


def test_etcd_volume_is_never_guessed(tmp_path: Path) -> None:
    """Two empty disks of the size: the node fails (kubeadm does not run), naming both."""
    disks = {"/dev/vda": ROOT, "/dev/vdb": {"size": 10 * GIB}, "/dev/vdc": {"size": 10 * GIB}}
    code, err, calls = run(etcd_disk_script(), tmp_path, disks)
    assert code == 1
    assert "several empty disks of 10737418240 bytes (/dev/vdb /dev/vdc)" in err
    assert not [c for c in calls if c.startswith(("mkfs", "mount "))]
    code, err, _ = run(etcd_disk_script(), tmp_path, {"/dev/vda": ROOT})
    assert (code, err.strip()) == (1, "scs-etcd-disk: no empty disk of 10737418240 bytes appeared")


def test_etcd_disk_script_passes_shellcheck(tmp_path: Path) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        skip_or_fail("shellcheck is not installed")
    path = tmp_path / "scs-etcd-disk.sh"
    path.write_text(etcd_disk_script())
    done = subprocess.run(
        [shellcheck, str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout
