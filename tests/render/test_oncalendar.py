"""The OnCalendar check (scs_templates/_settings/calendar.py) against the REAL systemd.

``spec.etcd.defrag.schedule`` is checked in pure Python (the product needs no systemd), as a
subset of what ``systemd-analyze calendar`` takes: whatever the check accepts, the real tool
accepts too (hypothesis, expressions built from the grammar's pieces and random text), and
the forms people write are accepted by both. The budget is small by default and longer with
``SCS_TEMPLATES_PROPERTY_EXAMPLES`` (``make property``).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scs_templates._settings.calendar import problem
from tests.support import skip_or_fail

PROPERTY_EXAMPLES = int(os.environ.get("SCS_TEMPLATES_PROPERTY_EXAMPLES", "150"))


@pytest.fixture(scope="module")
def systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        skip_or_fail("systemd-analyze not found: the OnCalendar check is compared with it")
        raise AssertionError  # pragma: no cover - skip_or_fail raises
    return found


def systemd_accepts(tool: str, expression: str) -> bool:
    done = subprocess.run(
        [tool, "calendar", expression], capture_output=True, timeout=30, check=False
    )
    return done.returncode == 0


COMMON = [
    "*-*-* 02:30:00",
    "*-*-* 02:30",
    "Sun 03:00",
    "Mon..Fri 01:15:00",
    "Sat,Sun *-*-1..7 03:00 UTC",
    "daily",
    "weekly",
    "Monthly",
    "*-*-01 04:00:00",
    "2026-01-01 00:00:00",
    "*-*~01 02:00",
    "*:0/15",
    "*-*-* 00/6:00:00",
    "hourly UTC",
]


@pytest.mark.parametrize("expression", COMMON)
def test_common_schedules_are_accepted_by_both(systemd_analyze: str, expression: str) -> None:
    assert problem(expression) is None
    assert systemd_accepts(systemd_analyze, expression)


REFUSED_BY_SYSTEMD = [
    "every day",
    "*-*-* 24:00",
    "*-*-* 00:60",
    "Fri..Mon",
    "1969-01-01",
    "2200-01-01",
    "*-13-01",
    "*-*-00",
    "*-*~29",
    "*-*-1/0",
    # N/R must repeat to a value within the field (found by the property test below)
    "12/1-*",
    "*-*-31/1",
    "23/1:00",
    " 00:00",
    "00:00 ",
    "00:00 Mon",
    "*-*-* 02:30:00\n",
    "",
]


@pytest.mark.parametrize("expression", REFUSED_BY_SYSTEMD)
def test_what_systemd_refuses_is_refused(systemd_analyze: str, expression: str) -> None:
    assert not systemd_accepts(systemd_analyze, expression)
    assert problem(expression) is not None


NUMBERS = st.sampled_from(
    ["*", "0", "1", "01", "2", "7", "12", "13", "23", "24", "28", "29", "31", "32", "59", "60",
     "1970", "1969", "2026", "2199", "2200", "026", "26"]
)  # fmt: skip


@st.composite
def component(draw: st.DrawFn) -> str:
    items = []
    for _ in range(draw(st.integers(1, 2))):
        item = draw(NUMBERS)
        if item != "*" and draw(st.booleans()):
            item += ".." + draw(NUMBERS.filter(lambda n: n != "*"))
        if draw(st.integers(0, 3)) == 0:
            item += "/" + draw(st.sampled_from(["0", "1", "2", "15"]))
        items.append(item)
    return ",".join(items)


WEEKDAYS = st.sampled_from(
    ["Mon", "mon", "Monday", "Tue", "Sun", "Sat,Sun", "Mon..Fri", "Fri..Mon", "Mon,Wed..Fri",
     "Funday"]
)  # fmt: skip


@st.composite
def expressions(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(
            st.sampled_from(["daily", "Daily", "weekly UTC", "fortnightly", "minutely"])
            | st.text(alphabet="0123456789*-:~,./ MonUTC", max_size=20)
        )
    tokens = []
    if draw(st.booleans()):
        tokens.append(draw(WEEKDAYS))
    if draw(st.booleans()):
        parts = [draw(component()) for _ in range(draw(st.integers(1, 3)))]
        separator = draw(st.sampled_from(["-", "-", "~"]))
        tokens.append("-".join(parts[:-1]) + (separator if len(parts) > 1 else "") + parts[-1])
    if draw(st.booleans()) or not tokens:
        tokens.append(":".join(draw(component()) for _ in range(draw(st.integers(1, 4)))))
    if draw(st.integers(0, 4)) == 0:
        tokens.append(draw(st.sampled_from(["UTC", "utc", "Europe/Berlin"])))
    if draw(st.integers(0, 6)) == 0:
        draw(st.randoms()).shuffle(tokens)
    return " ".join(tokens)


@settings(
    max_examples=PROPERTY_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(expression=expressions())
@example(expression="01~31")
@example(expression="*-*~1/2")
@example(expression="*:*:0..0 UTC")
def test_whatever_the_check_accepts_systemd_accepts(systemd_analyze: str, expression: str) -> None:
    if problem(expression) is None:
        assert systemd_accepts(systemd_analyze, expression), expression
