"""A handled signal runs what was registered with ``signals.on_signal``: the process module
registers ending every running tool group, so signals need not import it (``validate``
handles signals and starts no process). The end-to-end proof, a signal that ends helm's
group and removes its home, is tests/render/test_signals.py."""

from __future__ import annotations

import os
import signal
import time

import pytest

from scs_templates._core import process, signals


def test_a_handled_signal_runs_the_registered_stop_and_then_resume(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    hooks = [(lambda: calls.append("stop"), lambda: calls.append("resume"))]
    monkeypatch.setattr(signals, "_ON_SIGNAL", hooks)
    with pytest.raises(signals.Terminated), signals.handled():
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the handler runs between two bytecodes
            time.sleep(0.01)
        calls.append("not interrupted")
    assert calls == ["stop", "resume"]


def test_the_process_module_registers_ending_the_tool_groups() -> None:
    assert (process.stop_all, process.resume) in signals._ON_SIGNAL
