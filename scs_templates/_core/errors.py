"""Exception hierarchy shared by the library and the CLI.

Every error a user can cause or meet derives from :class:`ScsTemplatesError` and carries the
process exit code the CLI uses: 2 for bad input (settings, arguments, files), 1 for failures of
the tools underneath (helm, helmfile, Kubernetes, OpenStack). The CLI prints ``str(error)`` as
one line; the message must therefore name the field or file and never contain secrets.
"""

from __future__ import annotations


class ScsTemplatesError(Exception):
    """Base class: a failure with a one-line, user-facing message."""

    exit_code: int = 1


class InputError(ScsTemplatesError):
    """The user's input (a file, an argument, a setting) is wrong. Exit code 2."""

    exit_code = 2


class ToolError(ScsTemplatesError):
    """A tool underneath (helm, helmfile, the API server, OpenStack) failed. Exit code 1."""

    exit_code = 1


class ToolNotFoundError(ToolError):
    """helm or helmfile is missing or unsupported; the message says what to do."""
