"""Two baseline updates at once: each is recorded, one after the other (a lock around the
read, the append and the write), where before one of them was lost."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ci_eval.gate import baseline as baseline_store
from ci_eval.gate import main_history
from ci_eval.settings import RunSettings
from tests.gate.test_gate import results


def test_two_updates_at_once_are_both_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "baseline.json"
    read = baseline_store.read

    def slow_read(p: Path) -> Any:  # both read before either writes, without the lock
        data = read(p)
        time.sleep(0.3)
        return data

    monkeypatch.setattr(baseline_store, "read", slow_read)
    settings = RunSettings(baseline=str(path))
    runs = [results({"c": [1.0]}, started=f"t{i}") for i in range(2)]
    said: list[str] = []
    threads = [
        threading.Thread(target=lambda r=r: said.append(main_history.update_baseline(r, settings)))
        for r in runs
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all("1 case recorded" in line for line in said), said
    history = read(path)
    assert history is not None and len(history.pushes) == 2
    assert history.sets["s"].cases["c"].push == [1, 2]


def test_a_baseline_reached_through_a_symlink_is_updated_where_it_is(tmp_path: Path) -> None:
    real = tmp_path / "history" / "baseline.json"
    real.parent.mkdir()
    link = tmp_path / "baseline.json"
    link.symlink_to(real)
    for i in range(2):
        settings = RunSettings(baseline=str(link if i else real))  # one name, then the other
        main_history.update_baseline(results({"c": [1.0]}, started=f"t{i}"), settings)
    assert link.is_symlink()
    history = baseline_store.read(real)
    assert history is not None and len(history.pushes) == 2
