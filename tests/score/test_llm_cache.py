"""The judge's and the simulator's response cache (``--cache``) and their own usage: a second
identical job asks the judge nothing and scores the same; each run and sample is its own entry;
expired entries are asked again; a baseline update asks afresh; a pull request cannot move the
cache; the tokens the endpoint reports are counted per role."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from ci_eval.net import llm
from ci_eval.net.llm import ChatClient
from ci_eval.net.llm_cache import ResponseCache, attach, endpoint, parse_ttl
from ci_eval.settings import load_config
from ci_eval.settings.bar import hold
from tests.conftest import SAMPLES
from tests.helpers import git, run_sample_agent
from tests.judge_server import JudgeServer

EVALS = str(SAMPLES / "evals/weather_basic.evalset.json")
COMMAND = f"python {SAMPLES / 'agents/weather_agent/command_agent.py'}"
VALID, INVALID = '{"is_the_agent_response_valid": "valid"}', '{"is_the_agent_response_valid": "x"}'


def _answer(prompt: str, n: int) -> str:
    # the n-th identical prompt: a judge whose samples differ, so a re-asked one would show
    return VALID if n % 3 else INVALID


def _job(server: JudgeServer, cwd: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    out = cwd / "r.json"
    done = run_sample_agent(
        EVALS,
        "--metric",
        "final_response_match_v2=0.5",
        "--num-runs",
        "2",
        "--judge-url",
        server.url,
        "--judge-model",
        "m",
        "--cache",
        str(cwd / "cache"),
        "--results",
        str(out),
        *args,
        cwd=cwd,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode, json.loads(out.read_text()), done.stderr


def _scores(data: dict[str, Any]) -> dict[str, Any]:
    return {
        c["eval_id"]: [
            (m["score"], m["status"])
            for m in c["metrics"]
            if m["name"] == "final_response_match_v2"
        ]
        for s in data["sets"]
        for c in s["cases"]
    }


def _entries(cwd: Path) -> list[Path]:
    return sorted((cwd / "cache").glob("*.json"))


def test_a_second_identical_job_asks_the_judge_nothing_and_scores_the_same(
    tmp_path: Path,
) -> None:
    with JudgeServer(_answer) as server:
        code, first, said = _job(server, tmp_path)
        asked = len(server.prompts)
        assert asked > 0
        # every run and sample is its own entry: run 2's identical prompts too
        assert len(_entries(tmp_path)) == 2 * asked
        usage = first["settings"]["llm_usage"]["judge"]
        assert usage["calls"] == asked and usage["cache_hits"] == 0
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
        assert f"judge: {asked} calls, " in said

        again, second, said = _job(server, tmp_path)
        assert len(server.prompts) == asked  # not one call
    assert (again, _scores(second)) == (code, _scores(first))
    usage = second["settings"]["llm_usage"]["judge"]
    assert (usage["calls"], usage["cache_hits"], usage["input_tokens"]) == (0, asked, 0)
    assert f"judge: 0 calls ({asked} from the cache), 0 tokens" in said


def test_an_entry_keeps_the_answer_and_its_key_without_secrets(tmp_path: Path) -> None:
    with JudgeServer(_answer) as server:
        _job(server, tmp_path, "--judge-key-env", "JUDGE_KEY_FOR_TEST")
    entry = json.loads(_entries(tmp_path)[0].read_text())
    assert set(entry) == {"format", "created", "key", "answer", "signature"}
    assert entry["key"]["model"] == "m" and entry["key"]["run"] in (1, 2)
    assert entry["key"]["params"] == {"temperature": 0.0}
    assert entry["answer"]["text"] in (VALID, INVALID)
    text = "".join(p.read_text() for p in _entries(tmp_path))
    assert "sk-secret-judge-key" not in text


@pytest.fixture(autouse=True)
def _judge_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", "sk-secret-judge-key")


def test_expired_entries_are_asked_again(tmp_path: Path) -> None:
    with JudgeServer(_answer) as server:
        _job(server, tmp_path, "--cache-ttl", "1h")
        asked = len(server.prompts)
        for path in _entries(tmp_path):
            entry = json.loads(path.read_text())
            entry["created"] = time.time() - 7200
            path.write_text(json.dumps(entry))
        _, data, _ = _job(server, tmp_path, "--cache-ttl", "1h")
        assert len(server.prompts) == 2 * asked
        assert data["settings"]["llm_usage"]["judge"]["cache_hits"] == 0
        # written again, as new: a third job asks nothing
        _job(server, tmp_path, "--cache-ttl", "1h")
        assert len(server.prompts) == 2 * asked


def test_a_baseline_update_asks_afresh_and_says_so(tmp_path: Path) -> None:
    with JudgeServer(_answer) as server:
        _job(server, tmp_path)
        asked = len(server.prompts)
        _, data, said = _job(server, tmp_path, "--update-baseline")
        assert len(server.prompts) == 2 * asked  # main's history keeps the judge's real noise
        assert data["settings"]["llm_cache"]["read"] is False
        assert "not read (--update-baseline records main's history" in said
        # what it asked is written: the next pull request's job asks nothing
        _job(server, tmp_path)
        assert len(server.prompts) == 2 * asked


def test_each_run_and_sample_is_its_own_entry(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    with JudgeServer(lambda prompt, n: f"answer {n}") as server:
        client = ChatClient(server.url, "m", cache=cache)
        messages = [{"role": "user", "content": "rate this"}]
        answers = {}
        for run in (1, 2):
            with llm.one_case(run):
                for sample in (0, 1):
                    answers[run, sample] = client.ask(messages, sample).text
        assert len(server.prompts) == 4 and len(set(answers.values())) == 4
        assert len(list((tmp_path / "c").glob("*.json"))) == 4
        # with log probabilities asked for, another entry
        with llm.one_case(1):
            client.ask(messages, 0, logprobs=20)
        assert len(server.prompts) == 5
        for (run, sample), text in answers.items():
            with llm.one_case(run):
                done = client.ask(messages, sample)
            assert (done.text, done.cached) == (text, True)
        assert len(server.prompts) == 5
        # another model or temperature: another entry
        ChatClient(server.url, "m2", cache=cache).ask(messages)
        ChatClient(server.url, "m", temperature=0.5, cache=cache).ask(messages)
        assert len(server.prompts) == 7
    assert client.usage.as_dict()["calls"] == 5 and client.usage.as_dict()["cache_hits"] == 4


def test_usage_is_read_from_the_endpoints_answers() -> None:
    with JudgeServer(lambda prompt, n: "three word answer") as server:
        client = ChatClient(server.url, "m")
        client.complete([{"role": "user", "content": "one two"}])
        client.complete([{"role": "user", "content": "one two three four"}])
    assert client.usage.as_dict() == {
        "calls": 2,
        "cache_hits": 0,
        "input_tokens": 6,
        "output_tokens": 6,
    }
    used = llm.usage_of(judge=client, simulator=None)
    assert llm.usage_line(used) == "judge: 2 calls, 12 tokens"


def test_ttl_and_endpoint() -> None:
    assert parse_ttl(None) == 7 * 86400
    assert (parse_ttl("90m"), parse_ttl("12h"), parse_ttl("7d"), parse_ttl(30)) == (
        5400,
        43200,
        604800,
        30,
    )
    assert parse_ttl("0") == 0
    for bad in ("soon", "-1", "7y", True):
        with pytest.raises(ValueError):
            parse_ttl(bad)  # type: ignore[arg-type]
    assert (
        endpoint("https://user:pw@judge.example:8443/v1/?api-key=s3cret&api-version=2024")
        == "https://judge.example:8443/v1?api-version=2024"
    )


def test_a_bad_ttl_is_a_usage_error(tmp_path: Path) -> None:
    done = run_sample_agent(EVALS, "--cache", str(tmp_path / "c"), "--cache-ttl", "soon")
    assert done.returncode == 2
    assert "--cache-ttl 'soon': expected seconds or a duration like 12h or 7d" in done.stderr


def test_a_pull_request_cannot_move_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    main = tmp_path / "main"
    main.mkdir()
    (main / "ci-eval.toml").write_text('[run]\ncache = "llm-cache"\ncache_ttl = "7d"\n')
    git(main, "init", "-q", "-b", "main")
    git(main, "add", ".")
    git(main, "commit", "-q", "-m", "main")
    git(tmp_path, "clone", "-q", main.as_uri(), "pr")
    clone = tmp_path / "pr"
    git(clone, "checkout", "-q", "-b", "feature")
    (clone / "ci-eval.toml").write_text('[run]\ncache = "poisoned"\ncache_ttl = 999999999\n')
    git(clone, "commit", "-qam", "the pull request")
    monkeypatch.chdir(clone)
    settings = hold(
        load_config(Path("ci-eval.toml"), True), Path("ci-eval.toml"), {"GITHUB_BASE_REF": "main"}
    )
    assert (settings.cache, settings.cache_ttl) == ("llm-cache", "7d")
    assert [c.split(":")[0] for c in settings.bar_changes] == ["[run] cache", "[run] cache_ttl"]


def test_files_the_pull_request_tracks_in_the_cache_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / ("0" * 64 + ".json")).write_text("{}")
    git(tmp_path, "add", ".")
    monkeypatch.chdir(tmp_path)
    client = ChatClient("http://127.0.0.1:9/v1", "m")
    cache, said = attach([client], "cache", None, False, {"GITHUB_BASE_REF": "main"})
    assert cache is not None and cache.read is False and client.cache is cache
    assert "the pull request's tree has files in it" in said[0]
    outside, said = attach([], "cache", None, False, {})  # not a pull request
    assert outside is not None and outside.read is True and said == []


def test_the_simulated_user_is_cached_and_counted_apart_from_the_judge(tmp_path: Path) -> None:
    from ci_eval import pipeline
    from ci_eval.settings import RunSettings
    from tests.simulated_user import scripted_user

    def settings(url: str) -> RunSettings:
        done = RunSettings(paths=[str(SAMPLES / "evals/scenarios")], results=str(tmp_path / "r"))
        done.agent.kind, done.agent.command = "command", COMMAND
        done.baseline = str(tmp_path / "no-baseline.json")
        done.judge.base_url, done.judge.model = url, "loopback"
        done.cache = str(tmp_path / "cache")
        return done

    with JudgeServer(scripted_user()) as server:
        first = pipeline.run(settings(server.url))
        asked = len(server.bodies)
        second = pipeline.run(settings(server.url))
        assert len(server.bodies) == asked  # neither the user nor the judge asked again
    used = first.results.settings["llm_usage"]
    assert used["simulator"]["calls"] == 2 and used["judge"]["calls"] == asked - 2
    assert used["simulator"]["input_tokens"] > 0
    again = second.results.settings["llm_usage"]
    assert (again["simulator"]["calls"], again["simulator"]["cache_hits"]) == (0, 2)
    assert again["judge"]["calls"] == 0 and again["judge"]["cache_hits"] > 0
    assert second.exit_code == first.exit_code
    assert any(
        p.startswith("judge: 0 calls (") and "; simulator: 0 calls (2 from" in p
        for p in second.problems
    )


def test_an_entry_the_agent_could_have_written_is_not_read(tmp_path: Path) -> None:
    """Written after the cache was opened (the agent runs later), or not signed with the
    judge's key: asked again."""
    messages = [{"role": "user", "content": "is this answer right?"}]
    with JudgeServer(lambda prompt, n: "no") as server:
        honest = ChatClient(server.url, "m", "sk-judge", cache=ResponseCache(tmp_path))
        assert honest.ask(messages).text == "no"
        [entry] = list(tmp_path.glob("*.json"))
        forged = json.loads(entry.read_text())
        forged["answer"]["text"] = "yes"
        entry.write_text(json.dumps(forged))
        assert honest.ask(messages).text == "no" and len(server.prompts) == 2

        frozen = ResponseCache(tmp_path / "later")
        frozen.freeze()
        ChatClient(server.url, "m", cache=ResponseCache(tmp_path / "later")).ask(messages)
        client = ChatClient(server.url, "m", cache=frozen)
        assert client.ask(messages).cached is False and len(server.prompts) == 4
