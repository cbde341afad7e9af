"""A runner-like harness for composite actions: each step of ``runs.steps`` executed the way
GitHub's runner executes it, so the action's own logic is tested here, not only on GitHub.

- ``${{ }}`` expressions over the ``inputs``, ``steps``, ``github``, ``runner`` and ``env``
  contexts (literals, ``==``/``!=``, ``&&``/``||``/``!``, parentheses, ``always()``,
  ``success()``, ``failure()``, ``cancelled()``); an expression it does not know fails the test
  rather than being guessed at;
- a step's ``if:`` (default ``success()``); ``run:`` steps with ``shell: bash`` as the runner
  runs them (``bash --noprofile --norc -eo pipefail FILE``), their ``env:`` evaluated first,
  a fresh ``GITHUB_OUTPUT`` file each (``name=value`` and ``name<<DELIM`` forms read back);
- ``uses:`` steps run by fakes the test gives (``actions/setup-python`` and so on), keyed by
  ``owner/repo[/path]`` without the ref; a ``uses:`` without a fake fails the test;
- the action's ``outputs.*.value`` evaluated after the last step.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Fake = Callable[[dict[str, str], dict[str, str]], dict[str, str]]  # (with, env) -> outputs

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||!|\(|\))"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*))"
)
_TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}")


class Expressions:
    """GitHub's expression language, the part action files use."""

    def __init__(self, contexts: Mapping[str, Any], status: Callable[[], str]) -> None:
        self.contexts = contexts
        self.status = status  # "success" | "failure"

    def template(self, text: str) -> str:
        return _TEMPLATE.sub(lambda m: _text(self.evaluate(m.group(1))), text)

    def condition(self, text: str | None) -> bool:
        if text is None:
            return self.status() == "success"
        text = text.strip()
        if text.startswith("${{") and text.endswith("}}"):
            text = text[3:-2]
        value = self.evaluate(text)
        if not re.search(r"\b(always|failure|cancelled|success)\(\)", text):
            return self.status() == "success" and _truthy(value)
        return _truthy(value)

    def evaluate(self, text: str) -> Any:
        tokens = []
        position = 0
        text = text.strip()
        while position < len(text):
            match = _TOKEN.match(text, position)
            if match is None or match.end() == position:
                raise ValueError(f"the harness cannot read {text[position:]!r} in {text!r}")
            tokens.append(match)
            position = match.end()
        self._tokens, self._at = tokens, 0
        value = self._or()
        if self._at != len(tokens):
            raise ValueError(f"the harness cannot read {text!r}")
        return value

    def _peek(self) -> str | None:
        if self._at < len(self._tokens):
            return self._tokens[self._at].group("op")
        return None

    def _or(self) -> Any:
        value = self._and()
        while self._peek() == "||":
            self._at += 1
            right = self._and()
            value = value if _truthy(value) else right
        return value

    def _and(self) -> Any:
        value = self._compare()
        while self._peek() == "&&":
            self._at += 1
            right = self._compare()
            value = right if _truthy(value) else value
        return value

    def _compare(self) -> Any:
        value = self._unary()
        if self._peek() in ("==", "!="):
            op = self._peek()
            self._at += 1
            same = _loose(value) == _loose(self._unary())
            return same if op == "==" else not same
        return value

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._at += 1
            return not _truthy(self._unary())
        if self._peek() == "(":
            self._at += 1
            value = self._or()
            assert self._peek() == ")", "unbalanced parentheses"
            self._at += 1
            return value
        token = self._tokens[self._at]
        self._at += 1
        if token.group("str") is not None:
            return token.group("str")[1:-1].replace("''", "'")
        if token.group("num") is not None:
            return float(token.group("num"))
        name = token.group("name")
        if name is None:
            raise ValueError(f"unexpected {token.group(0)!r}")
        if self._peek() == "(":
            self._at += 2  # no function here takes arguments
            return self._function(name)
        if name in ("true", "false"):
            return name == "true"
        if name == "null":
            return None
        value: Any = self.contexts
        for part in name.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        return value

    def _function(self, name: str) -> bool:
        status = self.status()
        known = {
            "always": True,
            "success": status == "success",
            "failure": status == "failure",
            "cancelled": False,
        }
        if name not in known:
            raise ValueError(f"the harness has no function {name}()")
        return known[name]


def _truthy(value: Any) -> bool:
    return value not in (None, "", False, 0, 0.0)


def _loose(value: Any) -> Any:
    """GitHub compares strings case-insensitively and null as ''."""
    if value is None:
        return ""
    return value.lower() if isinstance(value, str) else value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read_outputs(path: Path) -> dict[str, str]:
    """A step's GITHUB_OUTPUT file, as the runner reads it."""
    outputs: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        name, _, value = line.partition("=")
        if name:
            outputs[name] = value
        i += 1
    return outputs


@dataclass
class Step:
    name: str  # its id, else its uses or a part of its run
    outcome: str  # success | failure | skipped
    outputs: dict[str, str] = field(default_factory=dict)
    log: str = ""
    conclusion: str = ""  # the outcome, but success for a failure with continue-on-error

    def __post_init__(self) -> None:
        self.conclusion = self.conclusion or self.outcome


@dataclass
class Run:
    steps: list[Step]
    outputs: dict[str, str]

    @property
    def failed(self) -> bool:
        return any(s.outcome == "failure" for s in self.steps)

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)

    def ran(self, name: str) -> bool:
        return any(s.name == name and s.outcome != "skipped" for s in self.steps)


def run_composite(
    action: Path,
    inputs: Mapping[str, str],
    *,
    workspace: Path,
    temp: Path,
    env: Mapping[str, str],
    fakes: Mapping[str, Fake],
    token: str = "ghs_harness",
) -> Run:
    """Run the composite action at ``action`` (its action.yml) with ``inputs`` in
    ``workspace``, as a job step would."""
    spec = yaml.safe_load(action.read_text())
    assert spec["runs"]["using"] == "composite"
    steps = _Steps(workspace, temp, env, fakes, token, action_path=action.parent)
    given = {k.lower(): v for k, v in inputs.items()}
    steps.contexts["inputs"] = {
        name: given.get(name, steps.expressions.template(_text(spec_input.get("default", ""))))
        for name, spec_input in spec.get("inputs", {}).items()
    }
    unknown = set(given) - set(steps.contexts["inputs"])
    assert not unknown, f"the action has no inputs {sorted(unknown)}"
    steps.run(spec["runs"]["steps"], default_shell=None)
    outputs = {
        name: steps.expressions.template(str(spec_output.get("value", "")))
        for name, spec_output in spec.get("outputs", {}).items()
    }
    return Run(steps.records, outputs)


def run_job(
    workflow: Path,
    job: str,
    *,
    workspace: Path,
    temp: Path,
    env: Mapping[str, str],
    fakes: Mapping[str, Fake],
    token: str = "ghs_harness",
) -> Run:
    """Run one job of the workflow file ``workflow`` in ``workspace`` as the runner runs its
    steps: ``run:`` steps in bash (a workflow's default shell), ``uses:`` steps by the fakes.
    The job's ``if:`` and ``runs-on:`` are the caller's business."""
    spec = yaml.safe_load(workflow.read_text())
    steps = _Steps(workspace, temp, env, fakes, token)
    steps.run(spec["jobs"][job]["steps"], default_shell="bash")
    return Run(steps.records, {})


class _Steps:
    """The steps of one composite action or job, run in order with their contexts."""

    def __init__(
        self,
        workspace: Path,
        temp: Path,
        env: Mapping[str, str],
        fakes: Mapping[str, Fake],
        token: str,
        action_path: Path | None = None,
    ) -> None:
        self.workspace, self.temp, self.fakes = workspace, temp, fakes
        self.records: list[Step] = []
        self.steps_context: dict[str, dict[str, Any]] = {}
        github = {"token": token, "workspace": str(workspace)}
        if action_path is not None:
            github["action_path"] = str(action_path)
        self.contexts: dict[str, Any] = {
            "github": github,
            "runner": {"os": "Linux", "arch": "X64", "temp": str(temp)},
            "steps": self.steps_context,
            "env": dict(env),
        }
        # a step that failed with continue-on-error fails nothing after it
        self.expressions = Expressions(
            self.contexts,
            lambda: (
                "failure" if any(r.conclusion == "failure" for r in self.records) else "success"
            ),
        )
        self.base_env = {
            **env,
            "GITHUB_WORKSPACE": str(workspace),
            "RUNNER_TEMP": str(temp),
            "RUNNER_OS": "Linux",
            "RUNNER_ARCH": "X64",
        }
        if action_path is not None:
            self.base_env["GITHUB_ACTION_PATH"] = str(action_path)

    def run(self, steps: list[dict[str, Any]], default_shell: str | None) -> None:
        for n, step in enumerate(steps):
            name = step.get("id") or step.get("uses") or f"step {n}: {step.get('run', '')[:30]}"
            key = step.get("id", f"_{n}")
            if not self.expressions.condition(step.get("if")):
                self.records.append(Step(name, "skipped"))
                self.steps_context[key] = {
                    "outputs": {},
                    "outcome": "skipped",
                    "conclusion": "skipped",
                }
                continue
            step_env = {
                k: self.expressions.template(_text(v)) for k, v in step.get("env", {}).items()
            }
            if "uses" in step:
                record = _uses(
                    step, self.expressions, {**self.base_env, **step_env}, self.fakes, name
                )
            else:
                shell = step.get("shell", default_shell)
                step = {**step, "shell": shell, "run": self.expressions.template(step["run"])}
                env = {**self.base_env, **step_env}
                record = _run(step, env, self.workspace, self.temp, name, n)
            if record.outcome == "failure" and step.get("continue-on-error"):
                record.conclusion = "success"
            self.records.append(record)
            self.steps_context[key] = {
                "outputs": record.outputs,
                "outcome": record.outcome,
                "conclusion": record.conclusion,
            }


def _uses(
    step: dict[str, Any],
    expressions: Expressions,
    env: dict[str, str],
    fakes: Mapping[str, Fake],
    name: str,
) -> Step:
    action = step["uses"].split("@")[0]
    assert action in fakes, f"the harness has no fake for {action}"
    given = {k: expressions.template(_text(v)) for k, v in step.get("with", {}).items()}
    try:
        outputs = fakes[action](given, env)
    except Exception as exc:  # the fake's way to fail the step
        return Step(name, "failure", log=str(exc))
    return Step(name, "success", outputs)


def _run(
    step: dict[str, Any], env: dict[str, str], workspace: Path, temp: Path, name: str, n: int
) -> Step:
    assert step.get("shell") == "bash", f"step {name}: the harness runs shell: bash only"
    script = temp / f"step-{n}.sh"
    script.write_text(step["run"])
    output = temp / f"output-{n}"
    output.write_text("")
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=workspace / step.get("working-directory", "."),
        env={**env, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
        check=False,
    )
    outcome = "success" if done.returncode == 0 else "failure"
    return Step(name, outcome, read_outputs(output), done.stdout + done.stderr)


def path_env() -> dict[str, str]:
    """What a runner's job environment has that the steps here need."""
    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
