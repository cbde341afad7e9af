"""``ci-eval history``: main's history as a static site. Thirty pushes recorded with `ci-eval
baseline update` (the rule each run follows is :func:`tests.history_pushes.outcome`), the site
written, and its pages read back: every number a page states equals the baseline's; hostile ids
are escaped; the pages need no script and no network; a missing or broken baseline is one line.

The trend pages follow agentevals 0.11's "Run History" and inspect's bundled log viewer (static
files); their intervals are :mod:`ci_eval.model.rates`'s, as every ci-eval report's."""

from __future__ import annotations

import functools
import itertools
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ci_eval.gate import baseline as baseline_store
from ci_eval.model.rates import clustered_rate
from ci_eval.report.history_site import flip_rates
from ci_eval.report.history_site.site import case_page
from ci_eval.results.usage_totals import percentile
from tests.helpers import git, run_cli
from tests.history_pushes import RUNS, outcome, push_results, seconds, tokens, write_pushes

PUSHES, SETS, CASES = 30, 2, 5


class _Rows(HTMLParser):
    """Each ``<tr>``'s and ``<td>``'s data attributes, by the id of the table they are in."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[dict[str, object]]] = {}
        self.table: str | None = None
        self.row: dict[str, object] | None = None
        self.scripts = 0
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        data = {k.removeprefix("data-"): v or "" for k, v in attrs if k.startswith("data-")}
        if tag == "script":
            self.scripts += 1
        if tag == "table":
            self.table = dict(attrs).get("id")
            self.tables[self.table or ""] = []
        elif tag == "tr" and self.table:
            self.row = dict(data, cells=[])
            self.tables[self.table].append(self.row)
        elif tag == "td" and self.row is not None:
            self.row["cells"].append(data)  # type: ignore[union-attr]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _read(path: Path) -> _Rows:
    parser = _Rows()
    parser.feed(path.read_text("utf-8"))
    return parser


@functools.cache
def _site(root: str) -> tuple[Path, Path]:
    """The thirty pushes recorded one by one through the CLI, and the site written."""
    folder = Path(root)
    base = folder / "baseline.json"
    for path in write_pushes(folder / "results", PUSHES, sets=SETS, cases=CASES):
        done = run_cli("baseline", "update", str(path), "--baseline", str(base), cwd=folder)
        assert done.returncode == 0, done.stderr
    done = run_cli("history", "--baseline", str(base), "-o", str(folder / "site"), cwd=folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"history written to {folder / 'site' / 'index.html'}: 30 pushes")
    return base, folder / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _site(str(tmp_path_factory.mktemp("history")))


def _runs(push: int, s: int, i: int) -> list[str]:
    return [outcome(push, s, i, r) for r in range(RUNS)]


def test_thirty_pushes_recorded_are_all_in_the_baseline(site: tuple[Path, Path]) -> None:
    data = baseline_store.read(site[0])
    assert data is not None
    assert [p.seq for p in data.pushes] == list(range(1, PUSHES + 1))
    assert {len(c.push) for s in data.sets.values() for c in s.cases.values()} == {PUSHES * RUNS}
    assert data.window == 20  # the gate's window is what it was
    view = baseline_store.gate_view(data)
    assert {len(c.push) for s in view.sets.values() for c in s.cases.values()} == {20}


def test_each_sets_pass_rate_per_push_is_the_baseline_s(site: tuple[Path, Path]) -> None:
    rows = _read(site[1] / "index.html").tables["rates"][1:]  # after the header's row
    assert [int(str(r["push"])) for r in rows] == list(range(1, PUSHES + 1))
    for p, row in enumerate(rows):
        cells = [c for c in row["cells"] if "set" in c]  # type: ignore[union-attr]
        pooled = []
        for s, cell in enumerate(cells[:SETS]):
            per_case = [
                (o.count("pass"), o.count("pass") + o.count("fail"))
                for o in (_runs(p, s, i) for i in range(CASES))
            ]
            pooled += per_case
            rate = clustered_rate(per_case)
            assert cell["set"] == f"s{s}"
            assert (int(cell["passed"]), int(cell["runs"])) == (rate.passed, rate.runs)
            assert float(cell["low"]) == pytest.approx(rate.low, abs=5e-5)
            assert float(cell["high"]) == pytest.approx(rate.high, abs=5e-5)
        total = clustered_rate(pooled)
        assert (int(cells[SETS]["passed"]), int(cells[SETS]["runs"])) == (total.passed, total.runs)


def test_spend_and_latency_per_push_are_the_baseline_s(site: tuple[Path, Path]) -> None:
    data = baseline_store.read(site[0])
    assert data is not None
    rows = _read(site[1] / "index.html").tables["spend"][1:]
    for p, row in enumerate(rows):
        runs = [(s, i, r) for s in range(SETS) for i in range(CASES) for r in range(RUNS)]
        finished = [(s, i, r) for s, i, r in runs if outcome(p, s, i, r) != "error"]
        assert int(str(row["runs"])) == len(runs)
        assert int(str(row["errors"])) == len(runs) - len(finished)
        assert int(str(row["tokens"])) == sum(tokens(p, i, r) for _, i, r in finished)
        walls = sorted(seconds(p, i, r) for _, i, r in runs)
        assert float(str(row["p95"])) == pytest.approx(percentile(walls, 0.95), abs=1e-4)
        assert float(str(row["cost"])) == pytest.approx(data.pushes[p].cost_usd)
        spent = sum(tokens(p, i, r) for _, i, r in finished)
        assert data.pushes[p].cost_usd == pytest.approx(
            sum(
                (t * 3 // 4) * 2.0 + (t - t * 3 // 4) * 8.0
                for t in (tokens(p, i, r) for _, i, r in finished)
            )
            / 1e6,
            abs=1e-6,
        )
        assert spent > 0


def test_the_cases_that_flip_are_counted_from_their_runs(site: tuple[Path, Path]) -> None:
    rows = _read(site[1] / "index.html").tables["flips"][1:]
    assert len(rows) == SETS * CASES
    for row in rows:
        s, i = int(str(row["set"])[1:]), int(str(row["case"])[1:])
        scored = [o for p in range(PUSHES) for o in _runs(p, s, i) if o != "error"]
        flips = sum(1 for a, b in itertools.pairwise(scored) if a != b)
        assert int(str(row["flips"])) == flips
        assert int(str(row["runs"])) == len(scored)
        assert int(str(row["failed"])) == scored.count("fail")
        assert float(str(row["flake-rate"])) == pytest.approx(flips / (len(scored) - 1), abs=1e-4)
        failing = [p for p in range(PUSHES) if "fail" in _runs(p, s, i)]
        assert row["last-failure"] == (str(failing[-1] + 1) if failing else "")
    rates = [float(str(r["flake-rate"])) for r in rows]
    assert rates == sorted(rates, reverse=True)  # the flakiest first
    assert (rows[0]["case"], rows[1]["case"]) == ("c1", "c1")


def test_a_case_page_lists_its_runs_as_the_baseline_holds_them(site: tuple[Path, Path]) -> None:
    page = _read(site[1] / case_page("s1", "c3"))
    runs = page.tables["runs"][1:]
    expected = [(p, outcome(p, 1, 3, r), r) for p in range(PUSHES) for r in range(RUNS)]
    assert len(runs) == len(expected)
    for row, (p, what, r) in zip(runs, expected, strict=True):
        assert int(str(row["push"])) == p + 1
        assert row["outcome"] == what
        assert float(str(row["latency"])) == pytest.approx(seconds(p, 3, r))
        assert row["tokens"] == ("" if what == "error" else str(tokens(p, 3, r)))
    pushes = page.tables["pushes"][1:]
    for p, row in enumerate(pushes):
        o = _runs(p, 1, 3)
        assert (int(str(row["passed"])), int(str(row["runs"]))) == (
            o.count("pass"),
            o.count("pass") + o.count("fail"),
        )
        assert int(str(row["errors"])) == o.count("error")


def test_the_pages_need_no_script_and_no_network(site: tuple[Path, Path]) -> None:
    pages = [site[1] / "index.html", *sorted((site[1] / "cases").glob("*.html"))]
    assert len(pages) == 1 + SETS * CASES
    for path in pages:
        text = path.read_text("utf-8")
        assert _read(path).scripts == 0, path
        # the only URLs are the SVG namespace's, which nothing fetches
        assert set(re.findall(r"https?://[^\s\"'<>]+", text)) <= {
            "http://www.w3.org/2000/svg",
            "http://www.w3.org/1999/xlink",
        }, path
        assert "<svg" in text


def test_hostile_case_ids_and_errors_are_escaped(tmp_path: Path) -> None:
    hostile = '<script>alert("x")</script>&"/../../etc'
    base = tmp_path / "baseline.json"
    data = None
    for p in range(3):
        data, _ = baseline_store.update(
            data, push_results(p, sets=1, cases=4, case_ids={3: hostile}), commit=f"{p:040x}"
        )
    assert data is not None
    baseline_store.write(base, data)
    done = run_cli("history", "--baseline", str(base), "-o", str(tmp_path / "site"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    name = case_page("s0", hostile)
    assert re.fullmatch(r"cases/[A-Za-z0-9_-]+\.html", name)
    for path in [tmp_path / "site" / "index.html", tmp_path / "site" / name]:
        text = path.read_text("utf-8")
        assert "<script" not in text and "&lt;script&gt;" in text
        assert "<b>boom</b>" not in text  # the agent's error text, escaped
    assert hostile in "".join(_read(tmp_path / "site" / name).text)  # as it reads, unescaped


def test_a_secret_in_an_error_never_reaches_a_page(tmp_path: Path) -> None:
    data = None
    for p in range(2):
        results = push_results(p, sets=1, cases=4)
        results.sets[0].cases[3].runs[0].error = "HTTP 401 with token s3cr3t-t0ken-value"
        data, _ = baseline_store.update(data, results, commit=f"{p:040x}")
    assert data is not None
    baseline_store.write(tmp_path / "baseline.json", data)
    env = {"GITHUB_TOKEN": "s3cr3t-t0ken-value", "PATH": "/usr/bin:/bin"}
    done = run_cli("history", "-o", "site", "--baseline", "baseline.json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    for path in (tmp_path / "site").rglob("*.html"):
        assert "s3cr3t-t0ken-value" not in path.read_text("utf-8")


def test_a_missing_baseline_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = run_cli("history", "--baseline", "nope.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "no baseline at nope.json" in done.stderr
    assert "ci-eval baseline update" in done.stderr


def test_a_broken_baseline_is_one_line_naming_it_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text(json.dumps({"format": 3, "sets": {"s": {"cases": 1}}}))
    done = run_cli("history", "--baseline", "b.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "b.json" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_data_branch_is_read_through_git_not_the_working_tree(tmp_path: Path) -> None:
    """A folder named like the branch's file is a pull request's to write: never read."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    data = None
    for p in range(4):
        data, _ = baseline_store.update(data, push_results(p, sets=1, cases=2), commit=f"{p:040x}")
    assert data is not None
    git(repo, "checkout", "-q", "--orphan", "ci-eval-data")
    baseline_store.write(repo / "baseline.json", data)
    git(repo, "add", "baseline.json")
    git(repo, "commit", "-qm", "history")
    git(repo, "checkout", "-q", "--orphan", "main")
    git(repo, "rm", "-rqf", ".")
    (repo / "baseline.json").write_text("{}")  # the working tree's: not a baseline
    done = run_cli("history", "--baseline-branch", "ci-eval-data", "-o", "site", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "4 pushes" in done.stdout
    assert _read(repo / "site" / "index.html").tables["rates"][1:][-1]["push"] == "4"


def test_flip_rates_put_the_flakiest_case_first() -> None:
    data = None
    for p in range(10):
        data, _ = baseline_store.update(data, push_results(p, sets=1, cases=3), commit=f"{p:040x}")
    assert data is not None
    found = flip_rates(data)
    assert [(f.set_id, f.case_id) for f in found][:2] == [("s0", "c1"), ("s0", "c0")]
    first = found[0]
    assert first.runs == 30 and first.failed == 6 and first.flips > 0
    assert first.flake_rate == round(first.flips / 29, 4)
    assert first.last_failure is not None and first.since is not None


# --- the PR comment links the cases it names to their pages ----------------------------------


def _comment(history: str | None) -> str:
    from ci_eval.report.markdown import render_comment
    from tests.factories import results

    return render_comment(results({"berlin": "FAILED", "paris": "PASSED"}), "t", history=history)


def test_the_comment_links_the_cases_it_names_to_their_history_pages() -> None:
    body = _comment("https://acme.github.io/shop/history/")
    page = case_page("s", "berlin")
    assert f"[berlin](https://acme.github.io/shop/history/{page})" in body


def test_without_a_history_site_or_with_no_web_address_the_comment_links_nothing() -> None:
    assert "/cases/" not in _comment(None)
    assert "/cases/" not in _comment("javascript:alert(1)//")


def test_history_url_is_a_report_setting_of_the_flag_toml_and_input() -> None:
    from ci_eval.settings.build import build
    from ci_eval.settings.model import SETTINGS

    row = next(s for s in SETTINGS if s.key == "history_url")
    assert (row.flag, row.input, row.bar) == ("--history-url", "history-url", False)
    settings = build({"history_url": "https://acme.github.io/h"}, {})
    assert settings.report({}).history_url == "https://acme.github.io/h"


def test_history_suggests_the_flaky_cases_for_quarantine_and_not_those_held(
    site: tuple[Path, Path], tmp_path: Path
) -> None:
    """The cases flipping most on main (gate.quarantine's rule: a flip rate of 0.3 over 5
    runs) come out as quarantine.toml entries, in the terminal and in the site's folder; the
    case that broke once (c2) and those that never flip are not candidates, and a case
    quarantine.toml holds already is left out."""
    import tomllib

    base, _ = site
    (tmp_path / "quarantine.toml").write_text(
        '[[quarantine]]\ncase = "s1:c1"\nreason = "flaky"\nowner = "team"\nuntil = "2999-01-01"\n'
    )
    done = run_cli("history", "--baseline", str(base), "-o", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "candidates for quarantine.toml" in done.stdout
    written = (tmp_path / "out" / "quarantine-suggestions.toml").read_text("utf-8")
    suggested = [e["case"] for e in tomllib.loads(written)["quarantine"]]
    assert suggested == ["s0:c1"]
    assert 'case = "s0:c1"' in done.stdout


def test_a_quarantined_case_in_the_comment_links_to_its_history_page_too() -> None:
    """The case held apart is the one whose flips a reviewer wants to see."""
    from ci_eval.model.quarantine import Quarantine
    from ci_eval.report.markdown import render_comment
    from tests.factories import results

    run = results({"berlin": "FAILED", "paris": "PASSED"})
    run.settings.quarantine = [Quarantine("s:berlin", "flaky", "team", "2999-01-31")]
    body = render_comment(run, "t", history="https://acme.github.io/shop/history/")
    assert "Quarantined: 1" in body
    assert f"[berlin](https://acme.github.io/shop/history/{case_page('s', 'berlin')})" in body
