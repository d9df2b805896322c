"""The ``scs-templates`` command line interface.

Each command group has a ``cmd_*.py`` module exposing ``register(subparsers)``, which only
builds its parsers; each parser names the function that runs its command
(``"scs_templates._cli.run.render:run_render"``), imported when the command runs
(:mod:`scs_templates._cli.run`). So ``--help`` builds every parser and imports no command.
"""

#: The program name in usage lines and error lines.
PROG = "scs-templates"
