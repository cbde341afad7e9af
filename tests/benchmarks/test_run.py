"""``benchmarks/run.py``'s own options and what ``--against`` prints from two trees' figures
(the benchmarks themselves are never run here: timings are not tests)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks import run
from benchmarks.against import (
    AgainstError,
    Compared,
    Tree,
    compare,
    comparison_table,
    measured,
    resolve,
    shared_options,
    side_by_side,
    table_rows,
)

NAMES = list(run.available())
REPO = Path(__file__).resolve().parents[2]


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        run.parse_args(argv, NAMES)
    assert exit_.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_an_unknown_benchmark_is_a_usage_error_listing_the_known_ones(capsys):
    line = usage_error(["--against", "HEAD", "scal"], capsys)
    assert "unknown scal" in line and "scale" in line


def test_fewer_than_three_pairs_is_a_usage_error(capsys):
    assert "at least 3 pairs" in usage_error(["--against", "HEAD", "--pairs", "2"], capsys)


def test_three_pairs_are_enough():
    assert run.parse_args(["--against", "HEAD", "--pairs", "3"], NAMES).pairs == 3


def test_record_without_against_is_a_usage_error(capsys):
    assert "give --against REV" in usage_error(["--record", "x.md"], capsys)


def test_no_simulated_prs_is_a_usage_error(capsys):
    assert "at least 1 simulated PR" in usage_error(["--prs", "0"], capsys)


def test_sim_noise_runs_only_when_named():
    assert "sim_noise" not in run.chosen(run.parse_args([], NAMES), NAMES)
    assert run.chosen(run.parse_args(["sim_noise"], NAMES), NAMES) == ["sim_noise"]


def test_a_rev_that_is_not_a_commit_says_what_to_give(tmp_path):
    with pytest.raises(AgainstError, match=r"--against nope: not a commit .* tag or a commit"):
        resolve(REPO, "nope")


def test_an_unbuildable_rev_exits_2_with_one_line(capsys, tmp_path):
    code = run.main(["--against", "no-such-rev", "startup", "--cache", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "not a commit" in err[0]


def test_a_figure_s_sample_is_read_with_or_without_its_spread():
    assert measured("12.70 s (median of 3, 12.10–13.00; cpu 13.10 s, peak 178 MB)") == (
        measured("12.70 s (cpu 13.10 s, peak 178 MB)")
    )
    sample = measured("0.43 s (cpu 0.40 s, peak 61 MB) = ratio 1.30")
    assert sample is not None and (sample.wall, sample.cpu, sample.peak) == (0.43, 0.40, 61)
    assert measured("5.4× faster") is None


def fig(wall: float, cpu: float | None = None, peak: float = 100) -> str:
    return f"{wall:.2f} s (cpu {wall if cpu is None else cpu:.2f} s, peak {peak:.0f} MB)"


def test_a_figure_five_percent_slower_is_marked_and_four_percent_is_not():
    slower = Compared("x", (fig(1.05),) * 3, (fig(1.00),) * 3)
    close = Compared("x", (fig(1.04),) * 3, (fig(1.00),) * 3)
    assert slower.worse() == ["time", "CPU"]
    assert close.worse() == []


def test_memory_alone_worse_is_marked_as_memory():
    assert Compared("x", (fig(1, peak=106),) * 3, (fig(1),) * 3).worse() == ["memory"]


def test_ratios_are_of_the_medians_and_the_range_pair_by_pair():
    row = Compared("x", (fig(2), fig(3), fig(9)), (fig(1), fig(2), fig(3)))
    assert row.ratios()["wall"] == pytest.approx(1.5)  # 3 / 2
    assert row.pair_range() == pytest.approx((1.5, 3.0))


def test_a_figure_one_tree_lacks_is_said_not_a_crash():
    rows = compare([{"a": fig(1)}, {"a": fig(1)}], [{"a": fig(1), "old": fig(2)}])
    assert [(r.name, r.only) for r in rows] == [("a", None), ("old", "theirs")]
    table = comparison_table(rows, "this tree", "d2bab55")
    assert "| old | | | | | only d2bab55 has it: this tree does not |" in table


def test_a_figure_that_is_not_timed_is_shown_side_by_side_unmarked():
    table = comparison_table(compare([{"s": "5.4× faster"}], [{"s": "4.3× faster"}]), "A", "B")
    assert "| s | 5.4× faster | 4.3× faster | | | not a timed figure |" in table


def test_the_marked_row_names_both_medians_and_the_ratio():
    table = comparison_table(
        compare([{"n": fig(20.4, 21, 246)}], [{"n": fig(12.7, 13, 178)}]), "A", "B"
    )
    row = table.splitlines()[-1]
    assert "20.40 s, cpu 21.00 s, 246 MB" in row and "12.70 s, cpu 13.00 s, 178 MB" in row
    assert "1.61 · 1.62 · 1.38" in row and "**≥ 5 % worse** (time, CPU, memory)" in row


MARKDOWN = """simulated PRs a row: 10
| condition | PR runs | gate failed [95 % interval] | target |
|---|---|---|---|
| nothing changed | 1 | false alarms 0 % [0–28] | ≤ 5 % |
| only here | 3 | caught 100 % [72–100] | ≥ 90 % |
"""
ALIGNED = """gate: 10 simulated PRs per row; 40 cases
gate: scenario                          PR runs  history gate   today  target
gate: nothing changed                         1         0.0%  100.0%  false alarms ≤ 5%
"""


def test_markdown_rows_and_aligned_lines_are_keyed_by_their_first_two_cells():
    notes, rows = table_rows(MARKDOWN)
    assert notes == ["simulated PRs a row: 10"]
    assert rows[("nothing changed", "1")] == ["false alarms 0 % [0–28]", "≤ 5 %"]
    notes, rows = table_rows(ALIGNED)
    assert notes == ["gate: 10 simulated PRs per row; 40 cases"]
    assert rows[("nothing changed", "1")] == ["0.0%", "100.0%", "false alarms ≤ 5%"]


def test_statistical_rows_are_joined_and_a_row_one_tree_lacks_is_said():
    theirs = MARKDOWN.replace("| only here | 3 | caught 100 % [72–100] | ≥ 90 % |\n", "")
    table = side_by_side(MARKDOWN, theirs, "A", "B").splitlines()
    assert table[0] == "| condition | PR runs | A | B |"
    assert "| only here | 3 | caught 100 % [72–100] · ≥ 90 % | (not in B) |" in table


def tree_with_help(label: str, help_text: str) -> Tree:
    tree = Tree(label=label, root=REPO, python=Path("python"))
    tree._help["scale"] = help_text
    return tree


def test_an_option_one_tree_lacks_is_given_to_neither_and_said():
    new = tree_with_help("this tree", "--repeat REPEAT --no-where")
    old = tree_with_help("d2bab55", "--repeat REPEAT")
    given, notes = shared_options([new, old], "scale", [("--repeat", "1"), ("--no-where",)])
    assert given == ["--repeat", "1"]
    assert notes == ["scale: d2bab55 has no --no-where; both trees ran without it"]


def test_every_benchmark_answers_help():
    """run.py reads each benchmark's --help to know which options it takes."""
    tree = Tree(label="here", root=REPO, python=Path(sys.executable))
    for name in ("gate", "usage", "scale", "http", "startup"):
        assert "--" in tree.options(name), name


def test_an_option_no_tree_takes_is_not_said():
    trees = [tree_with_help("this tree", "--repeat"), tree_with_help("d2bab55", "--repeat")]
    assert shared_options(trees, "scale", [("--no-where",)]) == ([], [])
