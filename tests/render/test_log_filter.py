"""The redacting log handler is installed when something first imports ``logging`` or shows
a warning (secrets.install_log_filter defers it: importing logging costs every command a few
ms), and redacts exactly as when it is installed at once. Each case runs in a fresh
interpreter: pytest itself has imported logging long before."""

from __future__ import annotations

import subprocess
import sys

from tests.support import REPO

SECRET = "sup3r-s3cret-value"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=REPO
    )


PRELUDE = f"""
import sys
from scs_templates._core import secrets
installed = secrets.install_log_filter(prefix="t")
assert "logging" not in sys.modules, "installing imported logging"
secrets.register({SECRET!r})
"""


def test_a_logger_imported_later_goes_through_the_redacting_handler() -> None:
    done = _python(
        PRELUDE
        + f"""
import logging
logging.getLogger("lib").warning("token %s", {SECRET!r})
logging.getLogger("lib").info("not shown %s", {SECRET!r})
"""
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "t: WARNING: lib: token <redacted>\n"


def test_a_warning_before_logging_is_imported_is_redacted() -> None:
    done = _python(
        PRELUDE
        + f"""
import warnings
warnings.warn("leaked " + {SECRET!r}, UserWarning, stacklevel=1)
"""
    )
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stderr
    assert done.stderr.startswith("t: WARNING: py.warnings: ")
    assert "UserWarning: leaked <redacted>" in done.stderr


def test_removing_before_anything_logged_leaves_nothing_behind() -> None:
    done = _python(
        """
import sys, warnings
before_path, before_show = list(sys.meta_path), warnings.showwarning
from scs_templates._core import secrets
installed = secrets.install_log_filter()
secrets.remove_log_filter(installed)
assert sys.meta_path == before_path and warnings.showwarning is before_show
import logging
assert logging.getLogger().handlers == []
"""
    )
    assert done.returncode == 0, done.stderr


def test_installed_at_once_with_debug_or_when_logging_is_there() -> None:
    done = _python(
        """
import logging
from scs_templates._core import secrets
installed = secrets.install_log_filter()
assert installed.handler in logging.getLogger().handlers
secrets.remove_log_filter(installed)
assert logging.getLogger().handlers == []
"""
    )
    assert done.returncode == 0, done.stderr


def test_render_and_validate_import_no_logging_and_debug_still_logs() -> None:
    example = str(REPO / "examples" / "openstack-minimal.yaml")
    for command in ("render", "validate"):
        done = _python(
            f"""
import sys
sys.argv = ["scs-templates", {command!r}, {example!r}]
from scs_templates._cli.main import main
code = main()
assert "logging" not in sys.modules, sys.modules["logging"]
sys.exit(code)
"""
        )
        assert done.returncode == 0, done.stderr
    debug = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from scs_templates._cli.main import main; sys.exit(main())",
            "--debug",
            "render",
            example,
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert debug.returncode == 0, debug.stderr
    assert "scs-templates: DEBUG: scs_templates._tools.helm.runner: running " in debug.stderr


def test_urllib3_retry_warnings_only_with_debug() -> None:
    """urllib3's one warning per re-sent request (with its object reprs) is not shown
    without --debug: the request's last attempt ends in one error line of ours
    (tests/plane/test_plane_faults.py, a killed kube-apiserver). Other urllib3 warnings are."""
    code = """
import logging
from scs_templates._core import secrets
installed = secrets.install_log_filter(prefix="t", debug={debug})
log = logging.getLogger("urllib3.connectionpool")
log.warning("Retrying (%r) after connection broken by '%r': %s", "Retry(total=2)", "E", "/x")
log.warning("Connection pool is full, discarding connection: %s", "h")
"""
    quiet = _python(code.format(debug=False))
    assert quiet.returncode == 0, quiet.stderr
    assert "Retrying" not in quiet.stderr
    assert "t: WARNING: urllib3.connectionpool: Connection pool is full" in quiet.stderr
    loud = _python(code.format(debug=True))
    assert "t: WARNING: urllib3.connectionpool: Retrying ('Retry(total=2)')" in loud.stderr
