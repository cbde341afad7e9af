"""The gate's settings are one frozen value, built by the one check every command runs, with the
defaults of the settings table."""

from __future__ import annotations

import dataclasses

import pytest

from ci_eval.errors import InputError
from ci_eval.settings import RunSettings, check_gate
from ci_eval.settings.check import check
from ci_eval.settings.gate import DEFAULT_GATE, GateSettings
from ci_eval.settings.model import SETTINGS, default

GATE_KEYS = [f.name for f in dataclasses.fields(GateSettings) if f.name != "fail_on"]


@pytest.mark.parametrize("key", GATE_KEYS)
def test_each_gate_setting_has_its_default_in_the_settings_table_only(key: str) -> None:
    row = next(s for s in SETTINGS if s.key == key)
    assert row.bar  # it decides where the bar is: read at the merge base in a pull request
    assert row.default is not None
    assert getattr(RunSettings(), key) == getattr(DEFAULT_GATE, key) == default(key)


def test_the_check_builds_the_gate_settings_the_stages_read() -> None:
    settings = RunSettings(significance=0.01, confirm_runs=2, fail_on=["regression,error"])
    gate = check(settings).gate
    assert gate == check_gate(settings)
    assert (gate.significance, gate.confirm_runs, gate.fail_on) == (
        0.01,
        2,
        ("regression", "error"),
    )


def test_the_gate_settings_cannot_be_changed_once_built() -> None:
    gate = check_gate(RunSettings())
    with pytest.raises(dataclasses.FrozenInstanceError):
        gate.significance = 0.5  # type: ignore[misc]


def test_a_setting_out_of_range_never_becomes_gate_settings() -> None:
    with pytest.raises(InputError, match="significance"):
        check_gate(RunSettings(significance=1.5))
