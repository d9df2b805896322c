"""``python -m testenv``: build the plane's programs, or run a plane in the foreground.

    python -m testenv build [--all] [--flux] [--occm] [--kubeadm vX.Y.Z ...]
                            [--kube-apiserver vX.Y.Z ...]
    python -m testenv up --dir DIR
    python -m testenv align

``up`` writes DIR/kubeconfig (cluster-admin), prints a line ``ready`` once every manager's
webhooks answer, and stops everything it started on SIGINT or SIGTERM (exit 0). Errors are
one line on stderr and exit 1. This interface is stable: reviewers and other tools use it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from testenv import build
from testenv.plane import start
from testenv.process import PlaneError


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _up(directory: Path) -> int:
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    plane = start(directory, log=_log)
    try:
        _log(f"testenv: kubeconfig {plane.kubeconfig}; logs {directory / 'logs'}")
        print("ready", flush=True)
        while not stop.wait(1.0):
            plane.check()
    finally:
        plane.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testenv", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start a plane in the foreground")
    up.add_argument("--dir", required=True, type=Path, help="state, logs and DIR/kubeconfig")
    make = sub.add_parser("build", help="build whatever is missing into the cache")
    make.add_argument(
        "--kubeadm",
        action="append",
        default=[],
        metavar="VERSION",
        help="also build the kubeadm of this Kubernetes release (e.g. v1.35.4)",
    )
    make.add_argument(
        "--kube-apiserver",
        action="append",
        default=[],
        metavar="VERSION",
        help="also build the kube-apiserver of this Kubernetes release (e.g. v1.35.4)",
    )
    make.add_argument(
        "--all",
        action="store_true",
        help="also every other program the test suite runs: the other releases' kubeadm and "
        "kube-apiserver, Flux's controllers (make test); first the pinned helm, as "
        "`scs-templates tools install` builds it, whose packages the plane reuses",
    )
    make.add_argument(
        "--flux",
        action="store_true",
        help="also build Flux's source-controller and helm-controller (testenv/flux.py; "
        "--all builds them too; tests/plane/test_plane_flux.py builds them when missing)",
    )
    make.add_argument(
        "--occm",
        action="store_true",
        help="also build the OpenStack cloud controller manager and the Cinder CSI plugin of "
        "its module (testenv/occm.py) and the plugin's csi-provisioner sidecar "
        "(testenv/csi_provisioner.py; --all builds them too, last; tests/cloud/test_plane_occm.py "
        "and tests/cloud/test_plane_openstack_cinder_csi.py build them when missing)",
    )
    sub.add_parser("where", help="print the cache directory of this tree")
    sub.add_parser(
        "align",
        help="bring the optimised test wrappers to the newest version of each module they "
        "share (testenv/wrappers.py; after a bump of a wrapper or of the pinned helm)",
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "up":
            return _up(args.dir)
        if args.command == "where":
            print(build.plane_dir())
            return 0
        if args.command == "align":
            from testenv import wrappers

            for wrapper in wrappers.align(_log):
                print(wrapper)
            return 0
        if args.all:  # the pinned helm, the plane, then the rest (build.build_all's order)
            root, *rest = build.build_all(_log)
            for path in rest:
                print(path, flush=True)
        else:
            root = build.ensure_built(_log)
        for version in args.kubeadm:
            print(build.build_kubeadm(version, _log))
        for version in args.kube_apiserver:
            print(build.build_kube_apiserver(version, _log))
        if args.flux:
            from testenv import flux

            print(flux.ensure_built(_log))
        if args.occm:
            from testenv import csi_provisioner, occm

            print(occm.ensure_built(_log))
            print(occm.ensure_csi_built(_log))
            print(csi_provisioner.ensure_built(_log))
        print(root)
        return 0
    except PlaneError as error:
        print(f"testenv: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
