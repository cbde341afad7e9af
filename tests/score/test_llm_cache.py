"""The judge's and the simulator's response cache (``--cache``) and their own usage: a second
identical job asks the judge nothing and scores the same; each run and sample is its own entry;
expired entries are asked again; a baseline update asks afresh; a pull request cannot move the
cache; the tokens the endpoint reports are counted per role."""

from __future__ import annotations

import base64
import json
import os
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


def _keys(folder: Path) -> tuple[str, Path]:
    """An Ed25519 key pair: the private key in base64 (a secret's value), the public key's file."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    public = folder / "cache-key.pub"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return base64.b64encode(raw).decode(), public


MAIN_KEY = "CACHE_SIGNING_KEY_FOR_TEST"


def _signed(cwd: Path) -> tuple[str, ...]:
    """The options of main's job: it signs with its private key, verifies with the public."""
    return ("--cache-sign-key-env", MAIN_KEY, "--cache-public-key", str(cwd / "cache-key.pub"))


def _pull_request(cwd: Path) -> tuple[str, ...]:
    return ("--cache-public-key", str(cwd / "cache-key.pub"))


def _job(
    server: JudgeServer, cwd: Path, *args: str, keys: bool = True
) -> tuple[int, dict[str, Any], str]:
    out = cwd / "r.json"
    if keys and "--cache-public-key" not in args:
        args = (*args, *_signed(cwd))
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
def _judge_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", "sk-secret-judge-key")
    private, _ = _keys(tmp_path)
    monkeypatch.setenv(MAIN_KEY, private)


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
    assert outside is not None and outside.read is True
    assert said == [
        "response cache cache: used within this job only — no --cache-public-key to tell "
        "main's signed answers from anyone's (docs: the response cache)"
    ]


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
        done.cache_sign_key_env, done.cache_public_key = MAIN_KEY, str(tmp_path / "cache-key.pub")
        return done

    with JudgeServer(scripted_user()) as server:
        first = pipeline.run(settings(server.url))
        asked = len(server.bodies)
        second = pipeline.run(settings(server.url))
        assert len(server.bodies) == asked  # neither the user nor the judge asked again
    used = first.results.settings.llm_usage
    assert used is not None and used["simulator"].calls == 2
    assert used["judge"].calls == asked - 2 and used["simulator"].input_tokens > 0
    again = second.results.settings.llm_usage
    assert again is not None and (again["simulator"].calls, again["simulator"].cache_hits) == (0, 2)
    assert again["judge"].calls == 0 and again["judge"].cache_hits > 0
    assert second.exit_code == first.exit_code
    assert any(
        p.startswith("judge: 0 calls (") and "; simulator: 0 calls (2 from" in p
        for p in second.problems
    )


def test_an_entry_forged_for_the_exact_prompts_is_refused_and_counted(tmp_path: Path) -> None:
    """The key of an entry holds nothing secret: a pull request (or its agent) can write one
    for the judge's exact prompts. Unsigned or re-signed by another key, it is refused; the
    judge is asked, and the run says how many were refused and why."""
    with JudgeServer(_answer) as server:
        _job(server, tmp_path)  # main's job: every entry signed
        asked = len(server.prompts)
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        from ci_eval.net.llm_cache import _sign

        theirs = Ed25519PrivateKey.generate()  # the pull request's own key
        for n, entry in enumerate(_entries(tmp_path)):
            forged = json.loads(entry.read_text())
            forged["answer"]["text"] = "FORGED"  # read as a verdict, it would show
            if n % 2:
                forged["signature"] = _sign(theirs, entry.name, forged["created"], forged["answer"])
            else:
                forged.pop("signature")
            entry.write_text(json.dumps(forged))
        _, data, said = _job(server, tmp_path, *_pull_request(tmp_path))
        assert len(server.prompts) == 2 * asked  # not one forged answer taken
    assert data["settings"]["llm_usage"]["judge"]["cache_hits"] == 0
    assert all(status in ("PASSED", "FAILED") for s in _scores(data).values() for _, status in s)
    [line] = [x for x in said.splitlines() if "refused" in x]
    assert f"response cache {tmp_path / 'cache'}: {asked} entries refused (" in line
    assert " not signed by main, " in line and line.endswith(" unsigned); asked afresh")


def test_without_keys_the_cache_is_used_within_the_job_only(tmp_path: Path) -> None:
    with JudgeServer(_answer) as server:
        _job(server, tmp_path, keys=False)
        asked = len(server.prompts)
        _, _, said = _job(server, tmp_path, keys=False)
        assert len(server.prompts) == 2 * asked  # an earlier job's entries are anyone's
    assert "used within this job only — no --cache-public-key" in said
    assert f"{asked} entries refused ({asked} from another job (no public key))" in said


def test_this_jobs_own_answer_is_used_from_memory_whatever_the_file_says(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "is this answer right?"}]
    with JudgeServer(lambda prompt, n: "no") as server:
        client = ChatClient(server.url, "m", cache=ResponseCache(tmp_path))
        assert client.ask(messages).text == "no"
        [entry] = list(tmp_path.glob("*.json"))
        entry.write_text(entry.read_text().replace('"no"', '"yes"'))  # the agent, meanwhile
        again = client.ask(messages)
        assert (again.text, again.cached, len(server.prompts)) == ("no", True, 1)


def test_a_fifo_or_a_symlink_under_an_entry_s_name_is_refused_without_blocking(
    tmp_path: Path,
) -> None:
    from tests.helpers import run_process

    with JudgeServer(_answer) as server:
        _job(server, tmp_path)
        for n, entry in enumerate(_entries(tmp_path)):
            target = tmp_path / f"elsewhere-{n}.json"
            target.write_text(entry.read_text())  # a signed entry, reached through a link
            entry.unlink()
            if n % 2:
                entry.symlink_to(target)
            else:
                os.mkfifo(entry)  # opened blocking, it would hold the run forever
        done = run_process(
            "run", EVALS, "--agent", "command", "--agent-command", COMMAND,
            "--metric", "final_response_match_v2=0.5", "--num-runs", "2",
            "--judge-url", server.url, "--judge-model", "m", "--cache", str(tmp_path / "cache"),
            *_pull_request(tmp_path), cwd=tmp_path, timeout=120,
        )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert " a symlink, " in done.stderr and " not a regular file); asked afresh" in done.stderr


def test_a_pull_request_that_puts_its_own_public_key_in_the_file_is_held_to_main_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cryptography.hazmat.primitives import serialization

    from ci_eval.net.llm_cache import load_keys

    def raw(key: Any) -> bytes:
        return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    repo = tmp_path / "repo"
    repo.mkdir()
    _, main_public = _keys(repo)
    main_key = main_public.read_bytes()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "main's public key")
    git(repo, "checkout", "-q", "-b", "feature")
    _keys(repo)  # the pull request's own pair, over the same file
    git(repo, "commit", "-qam", "the pull request")
    monkeypatch.chdir(repo)
    _, verifier = load_keys({"GITHUB_BASE_REF": "main"}, None, "cache-key.pub", repo)
    assert raw(verifier) == raw(serialization.load_pem_public_key(main_key))
    git(repo, "rm", "-q", "cache-key.pub")
    (repo / "new.pub").write_bytes(main_key)
    with pytest.raises(ValueError, match=r"new\.pub: not at the merge base with main"):
        load_keys({"GITHUB_BASE_REF": "main"}, None, "new.pub", repo)
