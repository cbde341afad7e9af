"""Every action file, workflow and documented ``yaml`` block loads with real YAML parsers, as
GitHub and the linters users run load them; the three action files agree as parsed data."""

from __future__ import annotations

import io
from typing import Any

import pytest
import yaml
from ruamel.yaml import YAML

from ci_eval.cli.action_entry import INPUTS, OUTPUTS
from tests.conftest import REPO
from tests.delivery.yamlfiles import ACTIONS, YamlText, sample_workflows, workflows, yaml_texts

TEXTS = yaml_texts()


def _pyyaml(text: str) -> Any:
    return yaml.safe_load(text)


def _ruamel(text: str) -> Any:  # YAML 1.2, strict about duplicate keys
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


@pytest.mark.parametrize("parse", [_pyyaml, _ruamel], ids=["PyYAML", "ruamel"])
@pytest.mark.parametrize("source", TEXTS, ids=[t.where for t in TEXTS])
def test_every_yaml_text_loads(source: YamlText, parse: Any) -> None:
    """Files are mappings; a block in the docs may be a list of a job's steps."""
    data = parse(source.text)
    steps = " block " in source.where and isinstance(data, list)
    assert isinstance(data, dict) or (steps and all(isinstance(s, dict) for s in data)), (
        f"{source.where} is neither a YAML mapping nor a list of steps"
    )


def test_the_yaml_texts_include_every_action_and_workflow_and_the_readmes_blocks() -> None:
    names = {t.where for t in TEXTS}
    assert set(ACTIONS) <= names
    assert {p.relative_to(REPO).as_posix() for p in workflows()} <= names
    assert {p.relative_to(REPO).as_posix() for p in sample_workflows()} <= names
    assert len(sample_workflows()) >= 4  # pull requests, main's history, forks' two phases
    assert sum(t.where.startswith("README.md block") for t in TEXTS) >= 4
    assert sum(" block " in t.where for t in TEXTS) >= 10  # README's and docs/' together


def _action(name: str) -> dict[str, Any]:
    return yaml.safe_load((REPO / name).read_text())


def test_the_three_actions_have_the_same_inputs_with_the_same_descriptions_and_defaults() -> None:
    docker = _action("action.yml")["inputs"]
    assert sorted(docker) == sorted(INPUTS)
    for name in ACTIONS[1:]:
        assert _action(name)["inputs"] == docker, name


def test_the_three_actions_have_the_same_outputs_and_descriptions() -> None:
    docker = _action("action.yml")["outputs"]
    assert sorted(docker) == sorted(OUTPUTS)
    for name in ACTIONS[1:]:
        outputs = _action(name)["outputs"]
        assert sorted(outputs) == sorted(docker), name
        for output, spec in outputs.items():
            assert spec["description"] == docker[output]["description"], (name, output)


def test_the_composite_actions_outputs_are_the_run_steps() -> None:
    for output, spec in _action("setup/action.yml")["outputs"].items():
        assert spec["value"] == f"${{{{ steps.run.outputs.{output} }}}}"


def test_every_action_has_a_name_description_and_a_runs_block() -> None:
    for name in ACTIONS:
        action = _action(name)
        assert isinstance(action["name"], str) and isinstance(action["description"], str)
        assert action["runs"]["using"] in ("docker", "composite"), name


def test_every_output_the_action_writes_is_declared() -> None:
    """A composite action passes on only the outputs it declares."""
    from ci_eval.publish import outputs
    from ci_eval.settings.model import ReportSettings
    from tests.factories import results

    written = outputs(results({"a": "PASSED"}), ReportSettings())
    assert sorted(written) == sorted(OUTPUTS) == sorted(_action("action.yml")["outputs"])
