"""Templates from a repository are untrusted: they may include only templates inside the
template search path, render under a time limit, and every failure is one line naming the
template file and line, with the built-in template rendering instead so no report is lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_eval.model.metric_spec import MetricConfig
from ci_eval.publish import ReportSettings, publish
from ci_eval.report.markdown import render_summary
from ci_eval.results.file import CaseRecord, RunRecord, RunResults, SetRecord
from ci_eval.text import templates

SECRET = "ghp_this_must_never_show"


def _results() -> RunResults:
    case = CaseRecord("c1", "s.evalset.json", 1, runs=[RunRecord(run=1)])
    record = SetRecord("s", "s.evalset.json", "adk", MetricConfig([], "default", "adk"))
    record.cases = [case]
    return RunResults(sets=[record], agent="test agent", started="2026-01-01", duration_s=1.0)


def _template_dir(tmp_path: Path, summary: str) -> Path:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "summary.md.j2").write_text(summary)
    return folder


def _render(folder: Path) -> tuple[str, list[str]]:
    problems: list[str] = []
    return render_summary(_results(), folder, problems=problems), problems


def test_an_include_of_a_symlink_out_of_the_template_dir_is_refused(tmp_path: Path) -> None:
    (tmp_path / "environ").write_text(f"GITHUB_TOKEN={SECRET}")
    folder = _template_dir(tmp_path, 'intro\n{% include "env.txt" %}\n')
    (folder / "env.txt").symlink_to(tmp_path / "environ")
    text, [problem] = _render(folder)
    assert SECRET not in text and SECRET not in problem
    assert "outside the template directory" in problem and "env.txt" in problem
    assert "the built-in template was used instead" in problem
    assert "c1" in text  # the built-in summary, complete


@pytest.mark.parametrize("name", ["../environ", "/etc/passwd", "./x/../../environ"])
def test_absolute_and_parent_names_are_not_served(tmp_path: Path, name: str) -> None:
    (tmp_path / "environ").write_text(SECRET)
    folder = _template_dir(tmp_path, f'{{% include "{name}" %}}')
    text, [problem] = _render(folder)
    assert SECRET not in text
    assert "template not found" in problem and "summary.md.j2:1" in problem


def test_a_symlink_inside_the_template_dir_is_fine(tmp_path: Path) -> None:
    folder = _template_dir(tmp_path, '{% include "part.j2" %}')
    (folder / "real.j2").write_text("the part")
    (folder / "part.j2").symlink_to(folder / "real.j2")
    text, problems = _render(folder)
    assert text.endswith("\n\nthe part") and problems == []  # below the verdict ci-eval writes


def test_a_runaway_template_stops_at_the_time_limit_and_the_default_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(templates, "RENDER_TIMEOUT", 1.0)
    folder = _template_dir(
        tmp_path,
        "top\n{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n",
    )
    text, [problem] = _render(folder)
    assert "rendering took longer than 1 s" in problem and "summary.md.j2" in problem
    assert "c1" in text


def test_an_output_explosion_stops_with_an_error(tmp_path: Path) -> None:
    folder = _template_dir(tmp_path, "{% for i in range(100000) %}{{ 'x' * 999 }}{% endfor %}")
    text, [problem] = _render(folder)
    assert "output is over" in problem and "c1" in text


@pytest.mark.parametrize(
    ("source", "line", "what"),
    [
        ("ok\n{{ ''.__class__.__mro__[1].__subclasses__() }}", 2, "unsafe"),
        ("ok\nok\n{% for %}", 3, "syntax error"),
        ("ok\n{{ no_such_thing.x }}", 2, "undefined"),
        ("{{ 'x' * 10**9 }}", 1, "too large"),
    ],
)
def test_template_errors_name_the_file_and_line(
    tmp_path: Path, source: str, line: int, what: str
) -> None:
    folder = _template_dir(tmp_path, source)
    text, [problem] = _render(folder)
    assert f"summary.md.j2:{line}: " in problem, problem
    assert what in problem
    assert "internal error" not in problem and "c1" in text


def test_publish_reports_the_template_problem_as_a_warning_and_writes_the_summary(
    tmp_path: Path,
) -> None:
    folder = _template_dir(tmp_path, "{{ oops(")
    out = tmp_path / "summary.md"
    warnings = publish(
        _results(), ReportSettings(summary=str(out), template_dir=str(folder)), env={}
    )
    assert len(warnings) == 1 and "summary.md.j2:1: syntax error" in warnings[0]
    assert "c1" in out.read_text()


def test_a_fifo_in_the_template_dir_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    folder = _template_dir(tmp_path, '{% include "pipe.j2" %}')
    os.mkfifo(folder / "pipe.j2")
    text, [problem] = _render(folder)
    assert "FIFO" in problem and "c1" in text


def test_the_built_in_template_has_no_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in templates are trusted and their time grows with the suite: a 100,000-case
    run must not lose its summary to the limit meant for a repository's templates."""
    monkeypatch.setattr(templates, "RENDER_TIMEOUT", 1e-9)
    assert "c1" in render_summary(_results())


def test_a_user_template_keeps_the_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(templates, "RENDER_TIMEOUT", 1e-9)
    slow = "{% for i in range(1000) %}{% for j in range(1000) %}x{% endfor %}{% endfor %}"
    text, [problem] = _render(_template_dir(tmp_path, slow))
    assert "took longer than" in problem and "c1" in text
