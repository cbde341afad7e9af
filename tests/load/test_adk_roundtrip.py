"""Our ADK output is what google-adk 2.13 itself reads from the original files.

For every ADK-dialect corpus file: ADK's own loader reads the original; ``EvalSet.model_validate``
(ADK's) accepts our ADK output unchanged; the two are equal in content. ADK draws random ids and
timestamps for legacy files, so those fields are left out of the comparison for them.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ci_eval.dialects import WRITERS
from ci_eval.load.evalsets import LoadedEvalSet
from ci_eval.model import canonical_form, dump_adk
from tests.conftest import CORPUS, corpus_files, corpus_id
from tests.helpers import load


class _Adk:
    """google-adk's eval set module, imported by the tests that use it (not at collection)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # pytest's collection looks at every module-level object
            raise AttributeError(name)
        return getattr(pytest.importorskip("google.adk.evaluation.eval_set"), name)


adk_eval_set = _Adk()

ADK_DIALECTS = {"adk", "adk-legacy", "adk-legacy-evalset"}


def _loaded(path: Path) -> LoadedEvalSet | None:
    outcome = load(path, root=CORPUS, claimed=False)
    return outcome if isinstance(outcome, LoadedEvalSet) else None


ADK_FILES = [p for p in corpus_files() if (o := _loaded(p)) and o.dialect in ADK_DIALECTS]
ALL_SETS = [p for p in corpus_files() if _loaded(p)]


def adk_reads(path: Path, dialect: str) -> Any:
    if dialect == "adk":
        return adk_eval_set.EvalSet.model_validate_json(path.read_text("utf-8"))
    if dialect == "adk-legacy":
        from google.adk.evaluation.agent_evaluator import AgentEvaluator
        from google.adk.evaluation.eval_config import EvalConfig

        return AgentEvaluator._load_eval_set_from_file(str(path), EvalConfig(criteria={}), {})
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file

    return load_eval_set_from_file(str(path), str(path))


def comparable(data: dict[str, Any], legacy: bool) -> dict[str, Any]:
    data = copy.deepcopy(data)
    if legacy:
        for key in ("eval_set_id", "name", "creation_timestamp"):
            data.pop(key, None)
        for case in data["eval_cases"]:
            case.pop("creation_timestamp", None)
            if case["eval_id"].endswith(".json"):
                case.pop("eval_id")  # ADK uses the path as given; we use it repo-relative
            for inv in case.get("conversation") or []:
                inv.pop("invocation_id", None)
                inv.pop("creation_timestamp", None)
    return data


@pytest.mark.parametrize("path", ADK_FILES, ids=[corpus_id(p) for p in ADK_FILES])
def test_adk_output_is_what_adk_reads(path: Path) -> None:
    ours = _loaded(path)
    assert ours is not None
    legacy = ours.dialect != "adk"
    theirs = adk_reads(path, ours.dialect).model_dump(mode="json", exclude_none=True)
    written = json.dumps(dump_adk(ours.eval_set))
    reread = adk_eval_set.EvalSet.model_validate_json(written)  # ADK accepts it unchanged
    assert comparable(reread.model_dump(mode="json", exclude_none=True), legacy) == comparable(
        theirs, legacy
    )


@pytest.mark.parametrize("path", ALL_SETS, ids=[corpus_id(p) for p in ALL_SETS])
def test_every_dialect_converts_to_adk_that_adk_accepts(path: Path) -> None:
    ours = _loaded(path)
    assert ours is not None
    data, _ = WRITERS["adk"].dump(ours.eval_set)
    adk_eval_set.EvalSet.model_validate(data)


@pytest.mark.parametrize("path", ALL_SETS, ids=[corpus_id(p) for p in ALL_SETS])
def test_trpc_round_trip_gives_the_same_canonical_model(path: Path, tmp_path: Path) -> None:
    ours = _loaded(path)
    assert ours is not None
    data, _ = WRITERS["trpc"].dump(ours.eval_set)
    out = tmp_path / "converted.evalset.json"
    out.write_text(json.dumps(data), "utf-8")
    back = _loaded(out)
    assert back is not None and back.dialect == "trpc"
    assert _trpc_comparable(canonical_form(back.eval_set)) == _trpc_comparable(
        canonical_form(ours.eval_set), lossy=True
    )


def _trpc_comparable(data: dict[str, Any], lossy: bool = False) -> dict[str, Any]:
    """What trpc can hold. ``lossy`` drops, from the original, what convert warns it loses."""
    data = json.loads(json.dumps(data).replace('"role": "assistant"', '"role": "model"'))
    if not lossy:
        return data
    for case in data["eval_cases"]:
        case.get("conversation_scenario", {}).pop("user_persona", None)
        case.get("session_input", {}).pop("session_id", None)
        case.pop("final_session_state", None)
        case.setdefault("final_session_state", {})
        ext = case.get("__extensions__", {})
        for dialect in ("watsonx", "adk-rs"):
            ext.pop(dialect, None)
        if not ext:
            case.pop("__extensions__", None)
        for inv in case.get("conversation") or []:
            for content in (inv["user_content"], inv.get("final_response") or {}):
                if "parts" in content:  # a part with only nulls ("text": null) is no text
                    content["parts"] = [p for p in content["parts"] if p]
            data_ = inv.get("intermediate_data")
            if data_ is not None:
                data_.setdefault("tool_uses", [])
                data_.setdefault("tool_responses", [])
                data_.setdefault("intermediate_responses", [])
                data_["intermediate_responses"] = [
                    ["", parts] for _, parts in data_["intermediate_responses"]
                ]
            for key in ("duration", "model_duration", "tool_duration", "rubrics", "app_details"):
                inv.pop(key, None)
            if "__extensions__" in inv:
                inv["__extensions__"].get("trpc", {}).pop("generation", None)
                if not inv["__extensions__"].get("trpc"):
                    inv.pop("__extensions__")
    return data


def test_corpus_is_not_empty_when_present() -> None:
    if CORPUS.is_dir():
        assert len(ADK_FILES) >= 35


def test_adk_loader_is_real() -> None:
    # the comparison above is only worth something if ADK really is the one reading
    assert asyncio is not None
    assert adk_eval_set.EvalSet.__module__ == "google.adk.evaluation.eval_set"
