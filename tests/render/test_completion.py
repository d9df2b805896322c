"""``scs-templates completion bash|zsh|fish`` (issue #39): static scripts made by shtab from
the parser; shtab is imported by this command only.

Proven: bash completes commands, options and choices when the script is sourced (real
bash); zsh and fish scripts are checked by their shells where installed and name every
command; settings and folders complete as paths; --help and render never import shtab.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from scs_templates._cli.main import build_parser, command_modules
from scs_templates._cli.run.completion import script
from tests.support import skip_or_fail

COMMANDS = sorted(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]


def bash_complete(words: list[str]) -> list[str]:
    """What bash offers for the last of ``words`` with the script sourced."""
    program = (
        'source /dev/stdin; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
        'COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; _shtab_scs_templates; '
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(
        ["bash", "-c", program, "bash", *words],
        input=script("bash"),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_commands_options_and_choices() -> None:
    assert bash_complete(["scs-templates", "ren"]) == ["render", "render-fleet"]
    assert set(bash_complete(["scs-templates", ""])) >= {"render", "describe", "completion"}
    assert bash_complete(["scs-templates", "render", "--outp"]) == ["--output", "--output-dir"]
    assert bash_complete(["scs-templates", "describe", "x.yaml", "-o", ""]) == [
        "text",
        "yaml",
        "json",
    ]
    assert bash_complete(["scs-templates", "completion", ""]) == ["bash", "zsh", "fish"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_settings_complete_as_files(tmp_path: pytest.TempPathFactory) -> None:
    text = script("bash")
    assert "_shtab_scs_templates_render_pos_0_COMPGEN=_shtab_compgen_files" in text
    assert "_shtab_scs_templates_render___output_dir_COMPGEN=_shtab_compgen_dirs" in text


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_command_is_in_every_script(shell: str) -> None:
    text = script(shell)
    missing = [command for command in COMMANDS if command not in text]
    assert not missing, missing


@pytest.mark.parametrize(("shell", "check"), [("zsh", ["-n"]), ("fish", ["--no-execute"])])
def test_the_shell_reads_its_script(shell: str, check: list[str]) -> None:
    binary = shutil.which(shell)
    if binary is None:
        skip_or_fail(f"no {shell} here (apt-get install {shell}; make node-tools in CI)")
    done = subprocess.run(
        [binary, *check], input=script(shell), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_only_the_completion_command_imports_shtab() -> None:
    program = (
        "import sys\n"
        "from scs_templates._cli.main import main\n"
        "for argv in (['--help'], ['render', '--help'], ['completion', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('shtab' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip().endswith("False")
    assert "scs_templates._cli.cmd_completion" in command_modules()
