"""What the ports in ``benchmarks/junit_consumers.py`` show for a tiny JUnit file, pinned to
what the consumers' code does (the commits each port names)."""

from __future__ import annotations

from benchmarks.junit_consumers import (
    CONSUMERS,
    Shown,
    markdown_table,
    parse_dorny_java_junit,
    parse_dorny_phpunit_junit,
    parse_enricomi,
    parse_gitlab,
    parse_mikepenz,
    summary_rows,
)

XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="weather" tests="4" failures="1" errors="1" skipped="1">
    <testcase classname="weather" name="berlin" file="evals/weather.json" line="49" time="0.1">
      <failure message="score 0.25 &lt; 0.8" type="ThresholdNotMet">berlin: FAILED
  response_match_score: 0.25 (threshold 0.8)
  actual response: no idea</failure>
    </testcase>
    <testcase classname="weather" name="paris" time="0.2">
      <error message="agent crashed" type="AgentError">paris: ERROR
Traceback: boom</error>
    </testcase>
    <testcase classname="weather" name="oslo" time="0">
      <skipped message="skipped: needs a user simulator" type="Skipped" />
    </testcase>
    <testcase classname="weather" name="tokyo" time="0.3">
      <flakyFailure message="run 2: score 0.5 &lt; 0.8" type="ThresholdNotMet">run 2</flakyFailure>
    </testcase>
  </testsuite>
</testsuites>
"""


def _case(shown: list[Shown], name: str) -> Shown:
    (found,) = [s for s in shown if s.name == name]
    return found


def test_dorny_prefixes_the_failure_type_to_its_message() -> None:
    berlin = _case(parse_dorny_java_junit(XML), "berlin")
    assert berlin.text == "ThresholdNotMet: score 0.25 < 0.8"


def test_dorny_phpunit_parser_prefixes_the_type_too() -> None:
    berlin = _case(parse_dorny_phpunit_junit(XML), "berlin")
    assert berlin.text == "ThresholdNotMet: score 0.25 < 0.8"


def test_dorny_java_parser_prints_undefined_for_a_type_without_a_message() -> None:
    xml = XML.replace('message="score 0.25 &lt; 0.8" ', "")
    assert _case(parse_dorny_java_junit(xml), "berlin").text == "ThresholdNotMet: undefined"


def test_dorny_keeps_the_failure_body_as_annotation_details() -> None:
    berlin = _case(parse_dorny_java_junit(XML), "berlin")
    assert berlin.details.startswith("berlin: FAILED\n")


def test_dorny_counts_an_error_as_failed() -> None:
    paris = _case(parse_dorny_java_junit(XML), "paris")
    assert (paris.state, paris.text) == ("failed", "AgentError: agent crashed")


def test_dorny_shows_no_reason_for_a_skipped_test() -> None:
    oslo = _case(parse_dorny_java_junit(XML), "oslo")
    assert (oslo.state, oslo.text, oslo.details) == ("skipped", "", "")


def test_dorny_passes_a_case_with_only_a_flaky_failure() -> None:
    tokyo = _case(parse_dorny_java_junit(XML), "tokyo")
    assert (tokyo.state, tokyo.text) == ("passed", "")


def test_dorny_phpunit_parser_reads_the_testcase_file_and_line_when_tracked() -> None:
    shown = parse_dorny_phpunit_junit(XML, tracked_files=["evals/weather.json"])
    assert _case(shown, "berlin").location == "evals/weather.json:49"


def test_mikepenz_shows_the_failure_message_without_its_type() -> None:
    berlin = _case(parse_mikepenz(XML), "berlin")
    assert (berlin.text, berlin.details.splitlines()[0]) == ("score 0.25 < 0.8", "berlin: FAILED")


def test_mikepenz_falls_back_to_two_body_lines_when_there_is_no_message() -> None:
    xml = XML.replace('message="score 0.25 &lt; 0.8" ', "")
    berlin = _case(parse_mikepenz(xml), "berlin")
    assert berlin.text == "berlin: FAILED\n  response_match_score: 0.25 (threshold 0.8)"


def test_mikepenz_titles_an_annotation_file_dot_name_at_the_testcase_line() -> None:
    berlin = _case(parse_mikepenz(XML), "berlin")
    assert (berlin.title, berlin.location) == ("evals/weather.json.berlin", "evals/weather.json:49")


def test_mikepenz_counts_an_error_as_failed() -> None:
    assert _case(parse_mikepenz(XML), "paris").state == "failed"


def test_mikepenz_does_not_show_a_skipped_test_by_default() -> None:
    oslo = _case(parse_mikepenz(XML), "oslo")
    assert (oslo.state, oslo.title, oslo.text) == ("skipped", "", "")


def test_mikepenz_shows_a_skipped_test_with_its_name_not_its_reason() -> None:
    oslo = _case(parse_mikepenz(XML, include_passed=True), "oslo")
    assert "needs a user simulator" not in oslo.title + oslo.text + oslo.details


def test_mikepenz_counts_a_flaky_failure_as_a_retry_of_a_passing_test() -> None:
    tokyo = _case(parse_mikepenz(XML), "tokyo")
    assert (tokyo.state, tokyo.text) == ("passed", "")
    assert "retries=1" in tokyo.note


def test_enricomi_annotation_message_is_the_results_file_not_the_failure_message() -> None:
    berlin = _case(parse_enricomi(XML, result_file="junit.xml"), "berlin")
    assert (berlin.title, berlin.text) == ("berlin (weather) failed", "junit.xml [took 0s]")


def test_enricomi_puts_the_message_then_the_body_in_raw_details() -> None:
    berlin = _case(parse_enricomi(XML), "berlin")
    assert berlin.details.splitlines()[:2] == ["score 0.25 < 0.8", "berlin: FAILED"]


def test_enricomi_drops_a_message_the_body_starts_with() -> None:
    xml = XML.replace("berlin: FAILED", "score 0.25 &lt; 0.8")
    berlin = _case(parse_enricomi(xml), "berlin")
    assert berlin.details.splitlines()[:2] == [
        "score 0.25 < 0.8",
        "  response_match_score: 0.25 (threshold 0.8)",
    ]


def test_enricomi_keeps_an_error_apart_from_a_failure() -> None:
    paris = _case(parse_enricomi(XML), "paris")
    assert (paris.state, paris.title) == ("error", "paris (weather) with error")


def test_enricomi_lists_a_skipped_test_by_name_without_its_reason() -> None:
    oslo = _case(parse_enricomi(XML), "oslo")
    assert (oslo.title, oslo.details) == ("1 skipped test found", "weather ‑ oslo")


def test_enricomi_passes_a_case_with_only_a_flaky_failure() -> None:
    tokyo = _case(parse_enricomi(XML), "tokyo")
    assert (tokyo.state, tokyo.text) == ("passed", "")


def test_gitlab_shows_the_failure_body_not_its_message() -> None:
    berlin = _case(parse_gitlab(XML), "berlin")
    assert berlin.text.startswith("berlin: FAILED\n")
    assert "score 0.25 < 0.8" not in berlin.text


def test_gitlab_shows_a_failure_without_body_as_its_attributes_hash() -> None:
    xml = XML.replace(
        'type="AgentError">paris: ERROR\nTraceback: boom</error>', 'type="AgentError"/>'
    )
    paris = _case(parse_gitlab(xml), "paris")
    assert paris.text == '{"message"=>"agent crashed", "type"=>"AgentError"}'


def test_gitlab_keeps_an_error_apart_from_a_failure() -> None:
    paris = _case(parse_gitlab(XML), "paris")
    assert (paris.state, paris.text) == ("error", "paris: ERROR\nTraceback: boom")


def test_gitlab_shows_a_skipped_message_only_as_a_json_object() -> None:
    oslo = _case(parse_gitlab(XML), "oslo")
    assert oslo.text == '{"message":"skipped: needs a user simulator","type":"Skipped"}'


def test_gitlab_shows_the_skipped_body_when_there_is_one() -> None:
    xml = XML.replace('type="Skipped" />', 'type="Skipped">oslo: SKIPPED</skipped>')
    assert _case(parse_gitlab(xml), "oslo").text == "oslo: SKIPPED"


def test_gitlab_passes_a_case_with_only_a_flaky_failure() -> None:
    tokyo = _case(parse_gitlab(XML), "tokyo")
    assert (tokyo.state, tokyo.text) == ("passed", "")


def test_every_port_reads_every_testcase_once() -> None:
    for _, parse in CONSUMERS.values():
        assert sorted(s.name for s in parse(XML)) == ["berlin", "oslo", "paris", "tokyo"]


def test_the_markdown_table_has_a_row_per_consumer() -> None:
    table = markdown_table(summary_rows()).splitlines()
    assert table[0].startswith("| consumer | failure: shows | error: shows |")
    assert len(table) == 2 + len(CONSUMERS)
