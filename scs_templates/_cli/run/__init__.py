"""What each command does: a module per command module of :mod:`scs_templates._cli`, and one
per command where the commands of a module import different things (render, values,
templates).

A ``cmd_*.py`` module only declares its commands' arguments and names the function that
runs each (``set_defaults(func="scs_templates._cli.run.render:run_render")``); the CLI
imports that function's module when the command runs, the way pip's command registry does.
So ``--help`` builds every parser without importing what the commands do, and the modules
here import what they use at the top.
"""
