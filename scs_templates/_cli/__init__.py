"""The ``scs-templates`` command line interface.

Each subcommand lives in its own ``cmd_*.py`` module exposing ``register(subparsers)``; the
modules import their heavy dependencies inside the handler so ``--help`` stays cheap.
"""
