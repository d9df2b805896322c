"""OpenStack integration against a REAL Keystone and Neutron (tests/support/openstack_stack.py).

No mocks: the services run locally from their own virtualenv; the client is the project's
openstacksdk. This session's stack has no compute or image service, so the flavor/image/keypair
checks are only seen skipping here; tests/cloud/test_openstack_preflight.py runs them against the
real Nova and Glance APIs on a stack of its own.
"""

from __future__ import annotations

import subprocess
import sys

from tests.support import REPO

# --------------------------------------------------------------------------- no stack needed


def test_importing_package_and_cli_does_not_import_openstacksdk() -> None:
    code = (
        "import sys\n"
        "import scs_templates.providers.openstack\n"
        "from scs_templates._cli.main import build_parser\n"
        "build_parser()\n"
        "bad = sorted(m for m in sys.modules if m == 'openstack' or m.startswith('openstack.')"
        " or m.startswith('keystoneauth1'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


# --------------------------------------------------------------------------- library API


#: The kinds of the chart whose controllers would add a finalizer.
