"""Entry point of ``scs-templates``: the parsers, and the hand-over of a parsed command to
:mod:`scs_templates._cli.harness`, which runs it and owns the exit-code contract (0 success,
2 bad input, 1 a tool underneath failed; one error line, a traceback only with ``--debug``).
"""

from __future__ import annotations

import argparse
import atexit
import errno
import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from functools import cache

from scs_templates import __version__
from scs_templates._cli import PROG
from scs_templates._cli.examples import epilog
from scs_templates._clikit.arguments import parse_duration
from scs_templates._core.entry_points import entry_points

# Subcommand modules, in the order they appear in --help. Each exposes register(subparsers).
# The providers' own commands (OpenStack's `openstack` and `migrate`) come from the
# entry-point group COMMANDS_GROUP, like a plug-in's: between these and the last two.
_OWN_COMMANDS: tuple[str, ...] = (
    "scs_templates._cli.cmd_settings",
    "scs_templates._cli.cmd_render",
    "scs_templates._cli.cmd_versions",
    "scs_templates._cli.cmd_fleet",
    "scs_templates._cli.cmd_lifecycle",
    "scs_templates._cli.cmd_inspect",
    "scs_templates._cli.cmd_encryption",
    "scs_templates._cli.cmd_apply",
    "scs_templates._cli.cmd_services",
    "scs_templates._cli.cmd_gitops",
)
_LAST_COMMANDS: tuple[str, ...] = (
    "scs_templates._cli.cmd_tools",
    "scs_templates._cli.cmd_completion",
)
#: The entry-point group of the providers' commands: the name is the command, the value the
#: module that registers it (docs/architecture.md, "Adding a provider").
COMMANDS_GROUP = "scs_templates.commands"


@cache
def plugin_commands() -> dict[str, str]:
    """Command -> its module, of every installed provider's commands (by command name).
    Read once: ``modules_for`` and ``command_modules`` both ask (do not modify the dict)."""
    points = sorted((name, module) for _, name, module in entry_points(COMMANDS_GROUP))
    return dict(points)


def command_modules() -> tuple[str, ...]:
    """Every command module, in the order of --help."""
    plugins = tuple(dict.fromkeys(plugin_commands().values()))
    return (*_OWN_COMMANDS, *plugins, *_LAST_COMMANDS)


# Commands that build ONLY their own module's parser (building every command's parser costs
# more than most commands); a command missing here builds all of them, which is correct,
# just slower. tests/render/test_cli.py checks that each is registered by the module named here.
LAZY_COMMANDS: dict[str, str] = {
    "validate": "scs_templates._cli.cmd_settings",
    "schema": "scs_templates._cli.cmd_settings",
    "render": "scs_templates._cli.cmd_render",
    "values": "scs_templates._cli.cmd_render",
    "templates": "scs_templates._cli.cmd_render",
    "render-fleet": "scs_templates._cli.cmd_fleet",
    "install": "scs_templates._cli.cmd_lifecycle",
    "status": "scs_templates._cli.cmd_lifecycle",
    "diff": "scs_templates._cli.cmd_lifecycle",
    "delete": "scs_templates._cli.cmd_lifecycle",
    "kubeconfig": "scs_templates._cli.cmd_inspect",
    "describe": "scs_templates._cli.cmd_inspect",
    "apply": "scs_templates._cli.cmd_apply",
    "tools": "scs_templates._cli.cmd_tools",
    "completion": "scs_templates._cli.cmd_completion",
}

#: Container objects allocated (net) before the cyclic garbage collector looks at the
#: youngest generation; CPython's default is 700. A command's start-up creates ~25,000 that
#: all live on (modules, classes, functions, the settings), so at 700 a ``validate`` or
#: ``render`` ran ~32 collections that found nothing, 7-20 ms of CPU. At 100,000 none runs
#: in a single command; a long one (``render-fleet``, a lifecycle wait) still collects,
#: only less often, with at most this many young objects between collections.
#: tests/render/test_cli.py::test_a_command_runs_no_garbage_collection.
GC_YOUNG_THRESHOLD = 100_000
# Top-level options that may come before the command without changing which parser is
# needed (anything else, e.g. --help, builds every command's parser).
_LAZY_OPTIONS = frozenset({"--debug"})
# Command lines whose only output is the top-level help (the list of commands): each
# command's own parser is then an :class:`_Outline` (tests/render/test_cli.py proves the help text
# the same as with the full parsers, at several terminal widths).
_OUTLINE_ARGV: tuple[list[str], ...] = ([], ["--help"], ["-h"])


class _Outline:
    """Stands in for a command's own parser where only the top-level help is printed.

    The top-level help lists each command's name and ``help`` (kept by the real
    ``add_parser``); the arguments, groups and actions of each command are never shown
    there, so building their real parsers (about half the cost of ``--help``) is skipped:
    every method call on an outline is accepted and returns another outline.
    """

    def __init__(self, **_options: object) -> None:
        pass

    def __getattr__(self, _name: str) -> Callable[..., _Outline]:
        return _outline


def _outline(*_args: object, **_options: object) -> _Outline:
    return _Outline()


def help_width() -> int:
    """The width argparse's HelpFormatter picks by itself (``shutil.get_terminal_size``'s
    columns minus 2: ``COLUMNS`` when a positive number, else the terminal of
    ``sys.__stdout__``, else 80), computed without importing shutil, which loads ``bz2``,
    ``lzma`` and ``fnmatch`` to see what archives it could make: a part of ``--help``'s
    cost (issue #19). tests/render/test_cli.py compares it with shutil's in every case."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # no stdout, closed, not a terminal
            columns = 80
    return columns - 2


class HelpFormatter(argparse.HelpFormatter):
    """argparse's own, at :func:`help_width` unless a width is given; an example block
    (:mod:`scs_templates._cli.examples`) keeps its lines."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:\n"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = help_width() if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class CommandParser(argparse.ArgumentParser):
    """A command's own parser (and its sub-commands', which take this class): the same
    formatter as the top level unless the command names one. argparse's default would
    import shutil for the width as soon as the first argument is added (it formats the
    argument to check it), although no help is printed."""

    def __init__(self, **options: object) -> None:
        options.setdefault("formatter_class", HelpFormatter)
        prog = options.get("prog")
        if options.get("epilog") is None and isinstance(prog, str) and prog:
            options["epilog"] = epilog(prog)
        # add_parser passes ArgumentParser's own keywords through: their types are its own
        super().__init__(**options)  # type: ignore[arg-type]
        # --debug after the command too (`validate FILE --debug`); not in its help
        self.add_argument(
            "--debug",
            action="store_true",
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace | None, list[str]]:
        """An unknown option is reported with THIS command's usage (argparse's top level
        would print its own, which says nothing about the command)."""
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def build_parser(
    modules: Sequence[str] | None = None, *, outline: bool = False
) -> argparse.ArgumentParser:
    """The parser with the commands of ``modules`` (default: all of them, for --help).

    ``outline``: the commands' own parsers are :class:`_Outline` stand-ins; the result can
    only print the top-level help (or see that no command was given).
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        formatter_class=HelpFormatter,
        description=(
            "Turn one standardized cluster settings file into Cluster API clusters: "
            "validate it, render the manifests with helm, install them, and manage the "
            "toolchain."
        ),
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="also print the traceback on errors (the exit code stays the same)",
    )
    parser.add_argument(
        "--timeout",
        dest="tool_timeout",
        type=parse_duration,
        metavar="DURATION",
        help="wall clock of each helm/helmfile call (e.g. 10m, 90s; default: "
        "$SCS_TEMPLATES_TIMEOUT, else 5m for helm, 15m for helmfile, 1h for the services' "
        "helmfile, 30s for version checks); the tool's whole process group is ended then. "
        "It also caps each Kubernetes API request (else 10s to connect, 60s to answer)",
    )
    # an _Outline stands in for a parser: it accepts every call (see the class)
    parser_class: type[argparse.ArgumentParser] = _Outline if outline else CommandParser  # type: ignore[assignment]
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=parser_class)
    for name in command_modules() if modules is None else modules:
        importlib.import_module(name).register(subparsers)
    return parser


def modules_for(argv: Sequence[str]) -> tuple[str, ...]:
    """The command modules whose parsers ``argv`` needs.

    Building every command's parser costs more than parsing, so a command line that names a
    known command (after at most ``--debug``) builds only that command's module; ``--version``
    alone needs none. Everything else (no command, ``--help``, an unknown command, any other
    option first) builds all of them, so help texts and error messages stay the same.
    """
    if list(argv) == ["--version"]:
        return ()
    for token in argv:
        if token in _LAZY_OPTIONS:
            continue
        if token in LAZY_COMMANDS:
            return (LAZY_COMMANDS[token],)
        plugin = plugin_commands().get(token)
        if plugin is not None:
            return (plugin,)
        break
    return command_modules()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code (:func:`run` is the console script)."""
    _guard_closed_stdout()
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments == ["--version"]:  # what argparse's version action prints, without a parser
        sys.stdout.write(f"{PROG} {__version__}\n")
        raise SystemExit(0)
    outline = arguments in _OUTLINE_ARGV
    parser = build_parser(modules_for(arguments), outline=outline)
    args = parser.parse_args(arguments)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    # --help and --version print without anything a command runs inside (the log handler,
    # the signal handling, the error lines): 30 ms targets (docs/performance.md)
    from scs_templates._cli import harness  # deferred: scs_templates._cli.harness

    return harness.run_command(args)


class _ClosedStdout:
    """Stands in for ``sys.stdout`` when the process was started with stdout closed."""

    def write(self, _text: str) -> int:
        error = OSError(errno.EBADF, "standard output is closed")
        error.stdout = True  # type: ignore[attr-defined]
        raise error

    def flush(self) -> None:
        return None


def _guard_closed_stdout() -> None:
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()


def run() -> None:
    """The console script: :func:`main`, then flush and exit without the interpreter teardown.

    Tearing the interpreter down (freeing every module and object) costs ~25 ms that a
    finished command does not need; the garbage collector's young generation is raised to
    :data:`GC_YOUNG_THRESHOLD` first (here, not in :func:`main`: the collector is the
    process's, and a library caller keeps its own). Output is flushed first and the exit
    handlers still run (they remove the private helm home, join finished worker threads); a
    failed flush of stdout (a full disk) is one line and exit 2 as in ``main``, a closed pipe
    exits as ``main`` decided.
    """
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    try:
        code = main()
    except SystemExit as exiting:  # argparse: --help, --version, usage errors
        if exiting.code is None or isinstance(exiting.code, int):
            code = exiting.code or 0
        else:
            print(exiting.code, file=sys.stderr)
            code = 1
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    except OSError as error:
        reason = error.strerror or error  # the OS's words: no secret in them
        print(f"{PROG}: error: cannot write to standard output: {reason}", file=sys.stderr)
        code = code or 2
    # not contextlib.suppress: --version imports nothing it does not need
    try:  # noqa: SIM105
        sys.stderr.flush()
    except OSError:
        pass
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
