"""What every command runs inside, once its arguments are parsed: the tool timeout of
``--timeout``, stdout errors that say they are about stdout, the redacting log handler, the
signal handling, and one error line with its exit code for every way the command can end.

Contract (other tools and CI rely on it): exit 0 on success, 2 for bad input, 1 when a tool
underneath failed. Errors are one line on stderr; a traceback only with ``--debug``.
:mod:`scs_templates._cli.main` imports this module when a command runs, not for ``--help`` or
``--version``, which need none of it.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import TYPE_CHECKING, Any

from scs_templates._cli import PROG
from scs_templates._core import logs, timeouts
from scs_templates._core.entry_points import load
from scs_templates._core.errors import ScsTemplatesError
from scs_templates._core.secrets import redact
from scs_templates._core.signals import Terminated, exit_code, handled

if TYPE_CHECKING:
    import argparse

__all__ = ["MAX_MESSAGE_CHARS", "run_command"]


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed command ``args.func`` and return its exit code."""
    timeouts.set_override(args.tool_timeout)
    original = sys.stdout
    sys.stdout = _Stdout(original)
    log_handler = logs.install_log_filter(debug=args.debug, prefix=PROG)
    try:
        with handled():
            return _run(args)
    finally:
        logs.remove_log_filter(log_handler)
        sys.stdout = original
        timeouts.set_override(None)


def _run(args: argparse.Namespace) -> int:
    """Run the command; every way it can end is one exit code and (on failure) one line.

    ``--debug`` prints the traceback first but never changes the code.
    """
    try:
        func = args.func
        if isinstance(func, str):  # "module:function", the command's implementation
            func = load(func)
        if not callable(func):
            raise TypeError(f"{args.func} is not callable")
        result = func(args)
        sys.stdout.flush()  # a full or closed stdout must fail here, not at interpreter exit
    except ScsTemplatesError as error:
        _traceback(args)
        problems = getattr(error, "problems", None)
        if problems:  # a SettingsError: one line per problem, FILE:LINE:COL: field: message
            for problem in problems:
                print(str(problem), file=sys.stderr)
        else:
            _error_line(str(error))
        return error.exit_code
    except KeyboardInterrupt:
        _traceback(args)
        print(f"{PROG}: interrupted (SIGINT); running tools were stopped", file=sys.stderr)
        return 130
    except Terminated as stopped:
        _traceback(args)
        print(f"{PROG}: stopped by {stopped}; running tools were stopped", file=sys.stderr)
        return exit_code(stopped.signum)
    except BrokenPipeError:
        # stdout closed by a pager or `head`: not an error of ours.
        _silence_stdout()
        return 0
    except (ConnectionError, TimeoutError) as error:  # a server underneath: exit 1
        _traceback(args)
        _error_line(_os_error_text(error))
        return 1
    except OSError as error:  # paths, permissions, a full disk, a closed stdout: the user's
        _traceback(args)
        _silence_stdout()
        _error_line(_os_error_text(error))
        return 2
    except UnicodeEncodeError as error:
        _traceback(args)
        _silence_stdout()
        encoding = error.encoding or "?"
        char = str(error.object[error.start : error.start + 1])
        _error_line(
            f"cannot write U+{ord(char or '?'):04X} in the output encoding {encoding}; "
            "set PYTHONIOENCODING=utf-8 (or a UTF-8 locale)"
        )
        return 2
    except Exception as error:  # an unexpected bug: one line unless --debug
        _traceback(args)
        _error_line(f"internal error: {type(error).__name__}: {error} (rerun with --debug)")
        return 1
    return int(result or 0)


#: No error line is longer than this (a tool may print megabytes after its ``Error:``).
MAX_MESSAGE_CHARS = 4000


def _error_line(message: str) -> None:
    message = redact(message)  # the last line of defence: registered secrets, URL userinfo
    if len(message) > MAX_MESSAGE_CHARS:
        cut = len(message) - MAX_MESSAGE_CHARS
        message = f"{message[:MAX_MESSAGE_CHARS]} ... ({cut} more characters not shown)"
    print(f"{PROG}: error: {message}", file=sys.stderr)


def _traceback(args: argparse.Namespace) -> None:
    if getattr(args, "debug", False):
        print(redact(traceback.format_exc()).rstrip(), file=sys.stderr)


def _os_error_text(error: OSError) -> str:
    reason = error.strerror or str(error) or type(error).__name__
    if error.filename is not None:
        where = str(error.filename)
        if error.filename2 is not None:
            where += f" -> {error.filename2}"
        return f"{where}: {reason}"
    if getattr(error, "stdout", False):
        return f"cannot write to standard output: {reason}"
    return reason


class _Stdout:
    """``sys.stdout`` whose write errors say that they are about standard output."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except OSError as error:
            error.stdout = True  # type: ignore[attr-defined]
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            error.stdout = True  # type: ignore[attr-defined]
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        fileno = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fileno)
    finally:
        os.close(devnull)
