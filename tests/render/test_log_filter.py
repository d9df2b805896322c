"""The redacting log handler (scs_templates._core.logs): every record and Python warning goes
through one stderr handler that redacts registered secrets and URL passwords, and removing
it leaves nothing behind. Each case runs in a fresh interpreter: pytest itself has set up
logging long before."""

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
from scs_templates._core import logs, secrets
installed = logs.install_log_filter(prefix="t")
secrets.register({SECRET!r})
"""


def test_a_logger_goes_through_the_redacting_handler() -> None:
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


def test_an_exception_text_in_a_record_is_redacted() -> None:
    done = _python(
        PRELUDE
        + f"""
import logging
try:
    raise ValueError("https://user:{SECRET}@example.org/")
except ValueError:
    logging.getLogger("lib").exception("failed")
"""
    )
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stderr
    assert done.stderr.startswith("t: ERROR: lib: failed\n")
    assert "ValueError: https://user:<redacted>@example.org/" in done.stderr


def test_a_warning_is_redacted() -> None:
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


def test_removing_leaves_nothing_behind() -> None:
    done = _python(
        """
import logging, warnings
before = warnings.showwarning
from scs_templates._core import logs
installed = logs.install_log_filter()
assert installed in logging.getLogger().handlers
logs.remove_log_filter(installed)
assert warnings.showwarning is before
assert logging.getLogger().handlers == []
"""
    )
    assert done.returncode == 0, done.stderr


def test_debug_logs_the_tool_command_lines_and_a_render_without_it_prints_nothing() -> None:
    example = str(REPO / "examples" / "openstack-minimal.yaml")
    cli = "import sys; from scs_templates._cli.main import main; sys.exit(main())"

    def render(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", cli, *options, "render", example],
            capture_output=True,
            text=True,
            check=False,
            cwd=REPO,
        )

    debug = render("--debug")
    assert debug.returncode == 0, debug.stderr
    assert "scs-templates: DEBUG: scs_templates._tools.helm.runner: running " in debug.stderr
    quiet = render()
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""


def test_urllib3_retry_warnings_only_with_debug() -> None:
    """urllib3's one warning per re-sent request (with its object reprs) is not shown
    without --debug: the request's last attempt ends in one error line of ours
    (tests/plane/test_plane_faults.py, a killed kube-apiserver). Other urllib3 warnings are."""
    code = """
import logging
from scs_templates._core import logs
installed = logs.install_log_filter(prefix="t", debug={debug})
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
