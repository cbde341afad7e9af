"""A ci-eval.toml with mistakes: every bad key at once, one line each, with the close match and
the type the setting wants; exit 2 before anything runs."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import run_cli

BAD = """\
[run]
timout = 30
concurrency = "2"
comment = 1

[agent]
kinds = "command"
"""


def test_every_bad_key_is_one_line_with_what_it_should_be(tmp_path: Path) -> None:
    (tmp_path / "ci-eval.toml").write_text(BAD)
    done = run_cli("run", cwd=tmp_path, env={})
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "ci-eval.toml: unknown key [run] timout (did you mean timeout?)",
        "ci-eval.toml: [run] concurrency: wrong type (str); expected a whole number",
        "ci-eval.toml: [run] comment: wrong type (int); expected true or false",
        "ci-eval.toml: unknown key [agent] kinds (did you mean kind?)",
    ]


def test_validate_names_them_all_too(tmp_path: Path) -> None:
    (tmp_path / "ci-eval.toml").write_text(BAD)
    done = run_cli("validate", cwd=tmp_path, env={})
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 4


def test_a_single_mistake_is_one_line_as_any_input_error(tmp_path: Path) -> None:
    (tmp_path / "ci-eval.toml").write_text('[judge]\nmodle = "m"\n')
    done = run_cli("run", cwd=tmp_path, env={})
    assert done.returncode == 2
    assert done.stderr == "ci-eval: ci-eval.toml: unknown key [judge] modle (did you mean model?)\n"
