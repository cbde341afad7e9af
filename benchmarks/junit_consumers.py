"""What four popular JUnit consumers show a reader for each failed, errored or skipped testcase
of a JUnit XML file — by running small ports of their real parsers, not by guessing.

    python -m benchmarks.junit_consumers FILE.xml [--markdown]

For each consumer, each testcase that is not a plain pass (it has a ``failure``, ``error``,
``skipped``, ``flaky*`` or ``rerun*`` child): the state that consumer gives it, the heading a
reader sees it under (``title``), the message under that heading (``text``) and what is one
click away (``details``), each as its first line and its length. Then a table, one row per
consumer — ``--markdown`` prints it as a GitHub Markdown table for the README. The table's
first three columns come from running the ports on ``PROBE_XML`` below (a failure, an error
and a skip whose message, type and body are told apart), so they describe the consumer, not
whichever states FILE happens to contain; the last two are read from the code.

The ports are written here in our own words, each function naming the file and commit it
follows; they are pure functions of the XML text (``parse_<consumer>(xml_text) ->
list[Shown]``), standard library only, with the consumer's defaults:

- dorny/test-reporter 29672c52a8220c09bd9f79b5b6cf6315f1763996 — both JUnit parsers
  (``java-junit``, ``phpunit-junit``), its job-summary report and its check-run annotations
  (``max-annotations: 10`` > 0, so errors are parsed).
- mikepenz/action-junit-report 305cd1f47a0fbd606dfeacc59048ea5595ea0a96 — ``src/testParser.ts``
  (``include_passed: false``, ``truncate_stack_traces: true``, ``check_retries: false``, no
  ``check_title_template``), what ``annotator.ts`` and ``table.ts`` do with it.
- EnricoMi/publish-unit-test-result-action c9bbcabcaf28c5ce2a9f8b6ee91c62873071b2ce —
  ``python/publish/junit.py`` (over junitparser 5.0.0, weiwei/junitparser
  51b7f299e96087b36c06e0cb1c8cf82669b4b12a), ``unittestresults.py`` and the annotations of
  ``publish/__init__.py`` (``report_individual_runs: false``, ``check_run_annotations: all
  tests, skipped tests``). Its PR comment and job summary show counts only.
- GitLab: ``fetch`` has no snapshot of gitlab-org/gitlab, so this follows its GitHub mirror
  gitlabhq/gitlabhq as the code index stores it: ``lib/gitlab/ci/parsers/test/junit.rb`` @
  d23f0cff3ca412a36fcefbb25dc4b36d2941a7de, ``lib/gitlab/xml_converter.rb`` @
  469adbda3d1611901e1e428b0bdbfd7b676e99cb, ``app/serializers/test_case_entity.rb`` @
  495a5c79948d687d28af0f41e823cb8e4c6fbb0e, and the ActiveSupport it subclasses (rails/rails
  2a2db1e8d6d104ee0611efcae7eb023af65cff34: ``xml_mini/nokogiri.rb``,
  ``core_ext/hash/conversions.rb``). A Hash printed into the system output reads as Ruby 3.3
  prints it (``{"message"=>"m"}``), the version gitlabhq's ``.ruby-version`` names.

Not modelled: the file-system lookups mikepenz makes to resolve a path (the location shown is
the file and line before that), crash paths of the real parsers (a testsuite without a name
for dorny, say), annotation limits, and how the web pages lay the text out.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

DORNY = "29672c52a8220c09bd9f79b5b6cf6315f1763996"
MIKEPENZ = "305cd1f47a0fbd606dfeacc59048ea5595ea0a96"
ENRICOMI = "c9bbcabcaf28c5ce2a9f8b6ee91c62873071b2ce"
JUNITPARSER = "51b7f299e96087b36c06e0cb1c8cf82669b4b12a"
GITLAB_JUNIT = "d23f0cff3ca412a36fcefbb25dc4b36d2941a7de"
RAILS = "2a2db1e8d6d104ee0611efcae7eb023af65cff34"

RERUN_TAGS = ("flakyFailure", "flakyError", "rerunFailure", "rerunError")


@dataclass(frozen=True)
class Shown:
    """One testcase (or one annotation of it) as a consumer presents it.

    ``state`` is passed / failed / error / skipped as the consumer counts it; ``title`` the
    heading a reader sees it under (an annotation's title, or the report line when the
    consumer makes no annotation); ``text`` the message under it ('' when none is shown);
    ``details`` what is one click away (an annotation's raw details); ``location`` the
    ``file:line`` it is attached to ('' when none); ``note`` anything else a reader should know.
    """

    name: str
    classname: str
    state: str
    title: str
    text: str
    details: str = ""
    location: str = ""
    note: str = ""


def _direct_text(elem: ET.Element) -> str:
    """An element's own text and CDATA (not its children's), as xml2js, xml-js and Nokogiri's
    ``to_hash`` collect it."""
    return (elem.text or "") + "".join(child.tail or "" for child in elem)


def _first_non_empty_line(text: str | None) -> str | None:
    if text is None:
        return None
    return next((line for line in re.split(r"\r?\n", text) if line.strip()), None)


def _js_parse_int(value: str | None) -> int | None:
    """JavaScript's ``parseInt``: leading digits, ``None`` for NaN."""
    match = re.match(r"\s*([+-]?\d+)", value or "")
    return int(match.group(1)) if match else None


def _ellipsis(text: str, limit: int) -> str:
    # follows dorny/test-reporter src/utils/markdown-utils.ts @ 29672c52a8220c09bd9f79b5b6cf6315f1763996  # noqa: E501
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _root(xml_text: str) -> ET.Element:
    return ET.fromstring(xml_text)


# ---------------------------------------------------------------------------------------------
# dorny/test-reporter


def _xml2js(elem: ET.Element) -> str | dict:
    """An element as xml2js (``parseStringPromise``, default options) hands it to dorny: text
    only -> the string; with attributes -> ``{"$": attrs, "_": text}``, ``_`` left out when the
    text is only whitespace."""
    text = _direct_text(elem)
    if not elem.attrib and len(elem) == 0:
        return text
    value: dict = {}
    if elem.attrib:
        value["$"] = dict(elem.attrib)
    if text.strip():
        value["_"] = text
    return value


def _dorny_java_source(
    details: str, tracked: dict[str, list[str]]
) -> tuple[str | None, int | None]:
    # follows dorny/test-reporter src/parsers/java-junit/java-junit-parser.ts @ 29672c52a8220c09bd9f79b5b6cf6315f1763996  # noqa: E501
    # (exceptionThrowSource, getFilePath) and java-stack-trace-element-parser.ts (the regex)
    for line in re.split(r"\r?\n", details):
        match = re.match(r"^\s*at (\S+/\S*/)?(.*)\((.*):(\d+)\)$", line)
        if not match:
            continue
        trace_path, file_name, line_str = match.group(2), match.group(3), match.group(4)
        files = tracked.get(file_name)
        if files is None:
            continue
        parts = trace_path.split(".")
        # package parts end at the first part starting with a character <= 'Z' (the class)
        cut = next((i for i, p in enumerate(parts) if p and p[0] <= "Z"), None)
        if cut is not None:
            parts = parts[:cut]
        if not parts:
            continue
        for path in files:
            dirs = path.rsplit("/", 1)[0].split("/") if "/" in path else ["."]
            if len(parts) > len(dirs):
                continue
            dirs = dirs[len(dirs) - len(parts) :]
            if all(p == d for p, d in zip(parts, dirs, strict=True)):
                return path, int(line_str)
    return None, None


def _dorny_shown(
    suite_name: str,
    group: str | None,
    tc: ET.Element,
    result: str,
    error: tuple[str | None, str | None, str | None, int | None] | None,
) -> Shown:
    """One test as dorny's report and annotation show it."""
    # follows dorny/test-reporter src/report/get-report.ts @ 29672c52a8220c09bd9f79b5b6cf6315f1763996  # noqa: E501
    # (getTestsReport: `❌ name`, then message ?? first non-empty line of details, one tab-indented
    # line each) and src/report/get-annotations.ts (title `suite ► group ► name`, message
    # 'Failed test found in: … Error: <message ?? first line ?? "Test failed">', raw_details)
    name = (tc.get("name") or "").strip()
    classname = tc.get("classname") or ""
    if error is None:
        icon = {"failed": "❌", "skipped": "⚪"}.get(result, "✅")
        note = "report line only: no annotation, no message" if result == "skipped" else ""
        return Shown(name, classname, _STATE[result], f"{icon} {name}", "", note=note)
    message, details, path, line = error
    if message is not None:
        text = message
    else:
        first = _first_non_empty_line(details)
        text = first.strip() if first is not None else ""
    annotation_message = message
    if annotation_message is None:
        annotation_message = _first_non_empty_line(details) or "Test failed"
    test_name = f"{group} ► {name}" if group else name
    title = _ellipsis(f"{suite_name} ► {test_name}", 255)
    at = f"{path}:{line}" if path else ""
    where = at or f"the report file, line {line or 0}"
    error_line = annotation_message.replace("\r", "").split("\n")[0]
    note = (
        f"report: ❌ {name}; annotation at {where}: 'Failed test found in: … Error: {error_line}'"
    )
    raw = _ellipsis((details or "").replace("\r", ""), 65535)
    return Shown(name, classname, _STATE[result], title, text, raw, at, note)


_STATE = {"failed": "failed", "skipped": "skipped", "success": "passed"}


def parse_dorny_java_junit(
    xml_text: str, *, tracked_files: Iterable[str] = (), parse_errors: bool = True
) -> list[Shown]:
    # follows dorny/test-reporter src/parsers/java-junit/java-junit-parser.ts @ 29672c52a8220c09bd9f79b5b6cf6315f1763996  # noqa: E501
    root = _root(xml_text)
    tracked: dict[str, list[str]] = defaultdict(list)
    for path in tracked_files:
        path = path.strip().replace("\\", "/")
        tracked[path.rsplit("/", 1)[-1]].append(path)
    # only <testsuites>' own <testsuite> children (or a lone <testsuite> root): nested suites
    # and testcases directly under <testsuites> are not read
    suites = root.findall("testsuite") if root.tag == "testsuites" else [root]
    shown = []
    for suite in suites:
        suite_name = (suite.get("name") or "").strip()
        for tc in suite.findall("testcase"):
            group = "" if tc.get("classname") == suite.get("name") else tc.get("classname")
            failures = tc.findall("failure") or tc.findall("error")  # `tc.failure ?? tc.error`
            if failures:
                result = "failed"  # getTestCaseResult: failure or error -> 'failed'
            elif tc.find("skipped") is not None:
                result = "skipped"
            else:
                result = "success"
            error = None
            if failures and parse_errors:
                value = _xml2js(failures[0])
                message: str | None = None
                if isinstance(value, str):
                    details: str | None = value
                else:
                    details = value.get("_")
                    attrs = value.get("$", {})
                    message = attrs.get("message")
                    if attrs.get("type"):
                        # JS string concatenation: an absent message prints as "undefined"
                        message = f"{attrs['type']}: {'undefined' if message is None else message}"
                path, line = _dorny_java_source(details, tracked) if details else (None, None)
                error = (message, details, path, line)
            shown.append(_dorny_shown(suite_name, group, tc, result, error))
    return shown


def _dorny_base_path(path: str, tracked: list[str]) -> str | None:
    # follows dorny/test-reporter src/utils/path-utils.ts @ 29672c52a8220c09bd9f79b5b6cf6315f1763996
    # (getBasePath)
    if path in tracked:
        return ""
    best = max((f for f in tracked if path.endswith(f)), key=len, default="")
    return path[: len(path) - len(best)] if best else None


def parse_dorny_phpunit_junit(
    xml_text: str,
    *,
    tracked_files: Iterable[str] = (),
    work_dir: str | None = None,
    parse_errors: bool = True,
) -> list[Shown]:
    # follows dorny/test-reporter src/parsers/phpunit-junit/phpunit-junit-parser.ts @ 29672c52a8220c09bd9f79b5b6cf6315f1763996  # noqa: E501
    root = _root(xml_text)
    tracked = [f.strip().replace("\\", "/") for f in tracked_files]
    tracked_set = set(tracked)

    def relative(path: str) -> str:
        path = path.strip().replace("\\", "/")
        base = work_dir if work_dir else _dorny_base_path(path, tracked)
        if base is not None and path.startswith(base):
            path = path[len(base) :]
        return path

    def from_details(details: str) -> tuple[str | None, int | None]:
        for line in re.split(r"\r?\n", details):
            for pattern in (
                r"((?:[A-Za-z]:)?[^\s:()]+?\.(?:php|phpt)):(\d+)",
                r"((?:[A-Za-z]:)?[^\s:()]+?\.(?:php|phpt))\((\d+)\)",
            ):
                match = re.search(pattern, line)
                if match and relative(match.group(1)) in tracked_set:
                    return relative(match.group(1)), int(match.group(2))
        return None, None

    def collect(suites: list[ET.Element], out: list[ET.Element]) -> None:
        for suite in suites:  # nested suites first, then the suite if it has testcases
            collect(suite.findall("testsuite"), out)
            if suite.findall("testcase"):
                out.append(suite)

    leaves: list[ET.Element] = []
    collect(root.findall("testsuite") if root.tag == "testsuites" else [root], leaves)
    shown = []
    for suite in leaves:
        suite_name = (suite.get("name") or "").strip()
        for tc in suite.findall("testcase"):
            class_name = tc.get("classname", tc.get("class", ""))
            group = "" if class_name == suite.get("name") else class_name
            failures = tc.findall("failure") or tc.findall("error")
            if failures:
                result = "failed"
            elif tc.find("skipped") is not None:
                result = "skipped"
            else:
                result = "success"
            error = None
            if failures and parse_errors:
                value = _xml2js(failures[0])
                details = value if isinstance(value, str) else value.get("_", "")
                path: str | None = None
                line: int | None = None
                if tc.get("file"):  # the testcase's own file and line attributes
                    rel = relative(tc.get("file", ""))
                    if rel in tracked_set:
                        path = rel
                    if tc.get("line"):
                        line = _js_parse_int(tc.get("line"))
                if not path and details:
                    found, found_line = from_details(details)
                    if found:
                        path, line = found, found_line
                message: str | None = None
                if not isinstance(value, str) and "$" in value:
                    message = value["$"].get("message")
                    kind = value["$"].get("type")
                    if kind:
                        message = f"{kind}: {message}" if message else kind
                error = (message, details, path, line)
            shown.append(_dorny_shown(suite_name, group, tc, result, error))
    return shown


# ---------------------------------------------------------------------------------------------
# mikepenz/action-junit-report

# follows mikepenz/action-junit-report src/testParser.ts @ 305cd1f47a0fbd606dfeacc59048ea5595ea0a96
# (escapeEmoji)
_EMOJI = re.compile(
    "[\U0001f300-\U0001f5ff\U0001f900-\U0001f9ff\U0001f600-\U0001f64f\U0001f680-\U0001f6ff"
    "\u2600-\u26ff\u2700-\u27bf\U0001f1e6-\U0001f1ff\U0001f191-\U0001f251\U0001f004\U0001f0cf"
    "\U0001f170-\U0001f171\U0001f17e-\U0001f17f\U0001f18e\u3030\u2b50\u2b55\u2934-\u2935"
    "\u2b05-\u2b07\u2b1b-\u2b1c\u3297\u3299\u303d\u00a9\u00ae\u2122\u23f3\u24c2\u23e9-\u23ef"
    "\u25b6\u23f8-\u23fa]"
)


def _mikepenz_file_and_line(
    file: str | None, line: str | None, class_name: str, output: str
) -> tuple[str, int]:
    # follows mikepenz/action-junit-report src/testParser.ts @ 305cd1f47a0fbd606dfeacc59048ea5595ea0a96  # noqa: E501
    # (resolveFileAndLine)
    file_name = file if file else class_name.split(".")[-1]
    number = _js_parse_int(line) or None
    if file_name and number:
        return file_name, number
    escaped = re.sub(r"[.*+?^${}()|\[\]\\]", lambda m: "\\" + m.group(0), file_name)
    escaped = escaped.replace("::", "/", 1)
    matches = re.findall(rf" [^ ]*{escaped}.*?:\d+", output)
    if not matches:
        return file_name, number or 1
    tokens = matches[-1].split(":")
    found = tokens.pop() or "0"
    prefix = tokens.pop() if tokens else ""
    if prefix.endswith(".rs"):
        file_name = prefix.split(" ")[-1]
    return file_name, _js_parse_int(found) or -1


def parse_mikepenz(
    xml_text: str,
    *,
    include_passed: bool = False,
    truncate_stack_traces: bool = True,
    check_retries: bool = False,
) -> list[Shown]:
    # follows mikepenz/action-junit-report src/testParser.ts @ 305cd1f47a0fbd606dfeacc59048ea5595ea0a96  # noqa: E501
    # (parseFile, parseSuite, parseTestCases, createTestCaseAnnotation)
    root = _root(xml_text)
    shown: list[Shown] = []
    if root.tag not in ("testsuites", "testsuite"):
        return shown

    def suite_cases(suite: ET.Element) -> None:
        suite_file, suite_line = suite.get("file"), suite.get("line")
        testcases = suite.findall("testcase")  # a <testsuites> root's own testcases count too
        retries: dict[int, int] = {}
        if check_retries:  # one testcase per name|classname|file, a passing one if any
            kept: dict[str, ET.Element] = {}
            for tc in testcases:
                key = f"{tc.get('name')}|{tc.get('classname', '')}|{tc.get('file', '')}"
                if key not in kept:
                    kept[key] = tc
                    continue
                previous = kept[key]
                count = retries.get(id(previous), 0) + 1
                if tc.find("failure") is None and tc.find("error") is None:
                    retries[id(tc)] = count
                    kept[key] = tc  # the passing run stands for the test
                else:
                    retries[id(previous)] = count
            testcases = list(kept.values())
        for tc in testcases:
            name = tc.get("name", "")
            classname = tc.get("classname", "")
            issues = tc.findall("failure") + tc.findall("error")  # failures first, then errors
            skip = tc.find("skipped") is not None or tc.get("status") in ("disabled", "ignored")
            success = not issues
            failed = bool(issues) and not skip
            level = "notice" if success or skip else "failure"
            flaky = len(tc.findall("flakyFailure"))  # flakyError and rerun* are not counted
            retried = retries.get(id(tc), 0) + flaky
            status = "skipped" if skip else "passed" if success else "failed"
            # (retries found by check_retries do not keep a passing case here)
            if level != "failure" and not include_passed and flaky == 0:
                note = (
                    "no annotation and no summary row (include_passed: false): counted only"
                    if skip
                    else ""
                )
                shown.append(Shown(name, classname, status, "", "", note=note))
                continue
            for index, issue in enumerate(issues or [None]):
                trace = _direct_text(issue).strip() if issue is not None else ""
                head = "\n".join(trace.split("\n")[:2]) if truncate_stack_traces else trace
                attr_message = issue.get("message") if issue is not None else None
                message = (attr_message or head or name).strip()
                resolve = classname or name
                file_name, line = _mikepenz_file_and_line(
                    tc.get("file")
                    or (issue.get("file") if issue is not None else None)
                    or suite_file,
                    tc.get("line")
                    or (issue.get("line") if issue is not None else None)
                    or suite_line,
                    resolve,
                    trace,
                )
                title = f"{file_name}.{name}" if file_name != name else name
                if len(issues) > 1:
                    title = f"{title} (failure {index + 1}/{len(issues)})"
                notes = []
                if level == "notice":
                    notes.append("a notice: not annotated unless annotate_notice: true")
                if skip:
                    notes.append("its message would be the testcase name")
                if retried:
                    notes.append(f"retries={retried}: listed (title, retries) in flaky_summary")
                if failed:
                    notes.append("detailed_summary row: title + '❌ failure' (no message)")
                shown.append(
                    Shown(
                        name,
                        classname,
                        status,
                        _EMOJI.sub("", title),
                        _EMOJI.sub("", message) if level == "failure" else "",
                        _EMOJI.sub("", trace) if level == "failure" else "",
                        f"{file_name}:{line}",
                        "; ".join(notes),
                    )
                )

    def walk(suite: ET.Element) -> None:
        suite_cases(suite)
        children = suite.findall("testsuite") or suite.findall("testsuites")
        for child in children:
            walk(child)

    walk(root)
    return shown


# ---------------------------------------------------------------------------------------------
# EnricoMi/publish-unit-test-result-action


@dataclass(frozen=True)
class _Case:
    """publish.unittestresults.UnitTestCase, the fields the annotations use."""

    test_file: str | None
    line: int | None
    class_name: str | None
    test_name: str | None
    result: str
    message: str | None
    content: str | None
    stdout: str | None
    stderr: str | None
    time: float | None


def _enricomi_cases(xml_text: str) -> list[_Case]:
    # follows EnricoMi/publish-unit-test-result-action python/publish/junit.py @ c9bbcabcaf28c5ce2a9f8b6ee91c62873071b2ce  # noqa: E501
    # (process_junit_xml_elems, get_results, get_result, get_message, get_content) over
    # weiwei/junitparser junitparser/junitparser.py @ 51b7f299e96087b36c06e0cb1c8cf82669b4b12a
    # (TestCase.result iterates *all* descendants tagged failure/error/skipped)
    root = _root(xml_text)
    suites = root.findall("testsuite") if root.tag == "testsuites" else [root]

    def get_cases(suite: ET.Element) -> list[ET.Element]:
        nested = [c for s in suite.findall("testsuite") for c in get_cases(s)]
        return nested + suite.findall("testcase")

    def number(value: str | None) -> int | None:
        try:
            return int(value) if value else None
        except ValueError:
            return None

    def child_text(tc: ET.Element, tag: str) -> str | None:
        elem = tc.find(tag)
        return elem.text if elem is not None else None

    cases = []
    for suite in suites:
        for tc in get_cases(suite):
            if tc.get("classname") is None and tc.get("name") is None:
                continue
            by_state: dict[str, list[ET.Element]] = defaultdict(list)
            for elem in tc.iter():
                if elem.tag in ("failure", "error", "skipped"):
                    by_state[elem.tag].append(elem)
            results = next(
                (by_state[s] for s in ("error", "failure", "success", "skipped") if s in by_state),
                [],
            )
            if not results and tc.get("status") == "disabled":
                result = "disabled"
            else:
                result = results[0].tag if results else "success"
            messages = [r.get("message") for r in results if r.get("message")]
            contents = [r.text for r in results if r.text is not None]
            time = tc.get("time")
            cases.append(
                _Case(
                    test_file=tc.get("file"),
                    line=number(tc.get("line")),
                    class_name=tc.get("classname"),
                    test_name=tc.get("name"),
                    result=result,
                    message="\n".join(messages) if messages else None,
                    content="\n".join(contents) if contents else None,
                    stdout=child_text(tc, "system-out"),
                    stderr=child_text(tc, "system-err"),
                    time=float(time.replace(",", "")) if time else None,
                )
            )
    return cases


def _enricomi_duration(seconds: float) -> str:
    # follows EnricoMi/publish-unit-test-result-action python/publish/__init__.py @ c9bbcabcaf28c5ce2a9f8b6ee91c62873071b2ce  # noqa: E501
    # (as_stat_duration)
    duration = abs(int(seconds))
    strings = []
    for unit, denominator in (("s", 60), ("m", 60), ("h", 24)):
        if unit == "s" or duration:
            strings.insert(0, f"{duration % denominator}{unit}")
            duration //= denominator
    if duration:
        strings.insert(0, f"{duration}d")
    return " ".join(strings)


def _enricomi_unicode(text: str) -> str:
    # follows EnricoMi/publish-unit-test-result-action python/publish/__init__.py @ c9bbcabcaf28c5ce2a9f8b6ee91c62873071b2ce  # noqa: E501
    # (restrict_unicode: characters above U+FFFF become a literal \U0001f600; abbreviate)
    return "".join(f"\\U{ord(c):08x}" if ord(c) > 0xFFFF else c for c in text)


def _enricomi_abbreviate(text: str, length: int) -> str:
    if len(text) <= length:
        return text
    return text[: length // 2] + "…" + text[len(text) - (length - 1) // 2 :]


def _message_in_content(message: str | None, content: str | None) -> bool:
    if content and message:
        return re.sub(r"\s+", " ", content.strip()).startswith(re.sub(r"\s+", " ", message.strip()))
    return False


def parse_enricomi(xml_text: str, *, result_file: str = "results.xml") -> list[Shown]:
    # follows EnricoMi/publish-unit-test-result-action python/publish/unittestresults.py @ c9bbcabcaf28c5ce2a9f8b6ee91c62873071b2ce  # noqa: E501
    # (get_test_results: index cases by test and state; aggregate_states: error > failure >
    # success > skipped) and python/publish/__init__.py (get_case_messages, get_case_annotation,
    # get_case_annotations: none for success or skipped; get_skipped_tests_list_annotation)
    cases = _enricomi_cases(xml_text)
    by_test: dict[tuple, dict[str, list[_Case]]] = defaultdict(lambda: defaultdict(list))
    for case in cases:
        state = "skipped" if case.result == "disabled" else case.result
        by_test[(None, case.class_name, case.test_name)][state].append(case)

    skipped_names = sorted(
        _enricomi_unicode(
            " ‑ ".join(p.replace(" ‑ ", " ‐ ") for p in (c, n or "Unknown test") if p)
        )
        for (_, c, n), states in by_test.items()
        if "skipped" in states and len(states) == 1
    )
    if len(skipped_names) == 1:
        skip_title = "1 skipped test found"
        skip_text = 'There is 1 skipped test, see "Raw output" for the name of the skipped test.'
    else:
        skip_title = f"{len(skipped_names)} skipped tests found"
        skip_text = (
            f"There are {len(skipped_names)} skipped tests, "
            'see "Raw output" for the full list of skipped tests.'
        )

    annotations: dict[tuple, tuple[str, str, str, str, str]] = {}
    for key, states in by_test.items():
        all_cases = sum(len(v) for v in states.values())
        for state, in_state in states.items():
            if state in ("success", "skipped"):
                continue
            # the first message key only (report_individual_runs: false); a failure's key is
            # its content (body), a skip's its message
            case = in_state[0]
            same = len(in_state)
            title = case.test_name or "Unknown test"
            if case.class_name:
                title = f"{title} ({case.class_name})"
            word = {"failure": "failed", "error": "with error"}.get(state, "skipped")
            if all_cases > 1:
                if same == all_cases:
                    title = f"All {all_cases} runs {word}: {title}"
                else:
                    title = f"{same} out of {all_cases} runs {word}: {title}"
            else:
                title = f"{title} {word}"
            level = "warning" if case.result == "failure" else "failure"
            maybe = [] if _message_in_content(case.message, case.content) else [case.message]
            details = [
                d.rstrip()
                for d in [*maybe, case.content, case.stdout, case.stderr]
                if d and d.rstrip()
            ]
            time = in_state[-1].time
            message = (
                result_file if time is None else f"{result_file} [took {_enricomi_duration(time)}]"
            )
            where = f"{case.test_file or case.class_name or '/'}:{case.line or 0}"
            annotations[(key, state)] = (
                _enricomi_abbreviate(_enricomi_unicode(title), 255),
                _enricomi_unicode(message),
                _enricomi_abbreviate(_enricomi_unicode("\n".join(details)), 64000),
                where,
                level,
            )

    shown = []
    seen: set[tuple] = set()
    state_word = {"failure": "failed", "error": "error", "success": "passed"}
    for case in cases:
        key = (None, case.class_name, case.test_name)
        state = "skipped" if case.result == "disabled" else case.result
        name, classname = case.test_name or "", case.class_name or ""
        if state == "skipped":
            if len(by_test[key]) == 1:
                shown.append(
                    Shown(
                        name,
                        classname,
                        "skipped",
                        skip_title,
                        skip_text,
                        "\n".join(skipped_names),
                        note="a name in the skipped-tests list annotation; no reason shown",
                    )
                )
            else:
                shown.append(
                    Shown(
                        name,
                        classname,
                        "skipped",
                        "",
                        "",
                        note="a skipped run of a test that also ran: not listed",
                    )
                )
            continue
        if state == "success":
            shown.append(Shown(name, classname, "passed", "", ""))
            continue
        title, message, details, where, level = annotations[(key, state)]
        note = f"a '{level}' annotation; PR comment and job summary show counts only"
        if (key, state) in seen:
            note = "folded into the annotation of this test's first run in this state"
        seen.add((key, state))
        shown.append(
            Shown(name, classname, state_word[state], title, message, details, where, note)
        )
    return shown


# ---------------------------------------------------------------------------------------------
# GitLab


class _DisallowedTypeError(Exception):
    pass


def _ruby_inspect(value: object) -> str:
    """Ruby 3.3's ``inspect`` of the strings, hashes and arrays ActiveSupport hands back."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("#{", "\\#{")
        for char, code in (("\n", "\\n"), ("\t", "\\t"), ("\r", "\\r"), ("\x1b", "\\e")):
            escaped = escaped.replace(char, code)
        return f'"{escaped}"'
    if isinstance(value, dict):
        pairs = (f"{_ruby_inspect(k)}=>{_ruby_inspect(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_ruby_inspect(v) for v in value) + "]"
    return str(value)


def _ruby_to_s(value: object) -> str:
    """``to_s``, as string interpolation and ``Array#join`` call it."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _ruby_inspect(value)


def _ruby_join(items: list[object], sep: str) -> str:
    """``Array#join``: nested arrays joined in place, everything else ``to_s``."""
    return sep.join(_ruby_join(i, sep) if isinstance(i, list) else _ruby_to_s(i) for i in items)


def _to_hash(elem: ET.Element) -> dict:
    """Nokogiri node -> hash, as ActiveSupport's XmlMini_Nokogiri ``Node#to_hash`` builds it."""
    # follows rails/rails activesupport/lib/active_support/xml_mini/nokogiri.rb @ 2a2db1e8d6d104ee0611efcae7eb023af65cff34  # noqa: E501
    node: dict = {}

    def add_text(text: str | None) -> None:
        if text:  # text and CDATA, whitespace too, in document order
            node["__content__"] = node.get("__content__", "") + text

    add_text(elem.text)
    for child in elem:
        key = child.tag.replace("-", "_")  # XMLConverter#normalize_keys
        value = _to_hash(child)
        if key not in node:
            node[key] = value
        elif isinstance(node[key], list):
            node[key].append(value)
        else:
            node[key] = [node[key], value]
        add_text(child.tail)
    if len(node) > 1 and not node.get("__content__", "").strip():
        node.pop("__content__", None)  # blank content next to child tags is dropped
    for attr, value in elem.attrib.items():
        node[attr.replace("-", "_")] = value  # attributes land in the same hash, last
    return node


def _ruby_to_f(text: str) -> float:
    match = re.match(r"\s*[+-]?\d+(\.\d+)?([eE][+-]?\d+)?", text)
    return float(match.group(0)) if match else 0.0


# ActiveSupport::XmlMini::PARSING for the type attributes a failure might plausibly carry; the
# others (date, datetime, duration, decimal, base64Binary, hexBinary, binary, file) are not
# modelled and leave the body as it is
_PARSING: dict[str, Callable[[str], object]] = {
    "integer": lambda s: _js_parse_int(s) or 0,
    "float": _ruby_to_f,
    "double": _ruby_to_f,
    "boolean": lambda s: s.strip() in ("1", "true"),
    "string": str,
}


def _deep_to_h(value: object) -> object:
    """ActiveSupport::XMLConverter#deep_to_h, as ``Gitlab::XmlConverter#to_h`` runs it."""
    # follows rails/rails activesupport/lib/active_support/core_ext/hash/conversions.rb @ 2a2db1e8d6d104ee0611efcae7eb023af65cff34  # noqa: E501
    if isinstance(value, list):
        items = [_deep_to_h(v) for v in value]
        return items if len(items) > 1 else items[0]
    if isinstance(value, str):
        return value
    assert isinstance(value, dict)
    kind = value.get("type")
    if isinstance(kind, str) and kind in ("symbol", "yaml"):
        raise _DisallowedTypeError(f'Disallowed type attribute: "{kind}"')
    content = value.get("__content__")
    if kind == "array":
        entries = next((v for v in value.values() if not isinstance(v, str)), None)
        if entries is None or content == "":
            return []
        return (
            [_deep_to_h(v) for v in entries] if isinstance(entries, list) else [_deep_to_h(entries)]
        )
    if kind == "file" or (content is not None and (len(value) == 1 or content.strip())):
        # a body wins: the element's other keys — its message and type attributes — are gone
        parser = _PARSING.get(kind) if isinstance(kind, str) else None
        return parser(content) if parser else content
    if kind == "string" and value.get("nil") != "true":
        return ""
    if not value or value.get("nil") == "true":
        return None  # an empty element
    if isinstance(kind, str) and len(value) == 1:
        return None  # a type attribute alone
    return {k: _deep_to_h(v) for k, v in value.items()}


def parse_gitlab(xml_text: str) -> list[Shown]:
    # follows gitlabhq/gitlabhq lib/gitlab/ci/parsers/test/junit.rb @ d23f0cff3ca412a36fcefbb25dc4b36d2941a7de  # noqa: E501
    # (parse!, all_cases, each_case, create_test_case) and lib/gitlab/xml_converter.rb @
    # 469adbda3d1611901e1e428b0bdbfd7b676e99cb (ActiveSupport::XMLConverter over Nokogiri)
    root = _root(xml_text)
    try:
        tree = {root.tag.replace("-", "_"): _deep_to_h(_to_hash(root))}
    except _DisallowedTypeError as exc:
        return [Shown("", "", "error", "suite error", f"JUnit data parsing failed: {exc}")]
    cases: list[tuple[dict, object]] = []

    def all_cases(node: object, parent: object = None) -> None:
        if not node:
            return
        for item in node if isinstance(node, list) else [node]:
            if not isinstance(item, dict):
                continue
            if parent is None:
                all_cases(item.get("testsuites"), item)  # one top-level <testsuites> only
            if parent is not None:
                testcase = item.get("testcase")
                if testcase:
                    for tc in testcase if isinstance(testcase, list) else [testcase]:
                        if isinstance(tc, dict):
                            cases.append((tc, item.get("name")))
            all_cases(item.get("testsuite"), item)

    all_cases(tree)
    shown = []
    for data, suite_name in cases:
        out = f"System Out:\n\n{_ruby_to_s(data['system_out'])}" if "system_out" in data else None
        err = f"System Err:\n\n{_ruby_to_s(data['system_err'])}" if "system_err" in data else None
        if "failure" in data:
            state = "failed"
            output: object = _ruby_join(
                [x for x in (data["failure"], out, err) if x is not None], "\n\n"
            )
        elif "error" in data:
            state = "error"
            output = _ruby_join([x for x in (data["error"], out, err) if x is not None], "\n\n")
        elif "skipped" in data:
            state = "skipped"
            output = data["skipped"]  # not joined: a bare <skipped/> is nil, attributes a Hash
        else:
            state, output = "passed", None
        if output is None:
            text = ""
        elif isinstance(output, str):
            text = output
        else:  # TestCaseEntity exposes it as it is: a JSON object, not a string
            text = json.dumps(output, ensure_ascii=False, separators=(",", ":"))
        name = data.get("name") if isinstance(data.get("name"), str) else ""
        classname = data.get("classname") if isinstance(data.get("classname"), str) else ""
        file = data.get("file") if isinstance(data.get("file"), str) else ""
        note = f"suite {suite_name}; shown as name, classname, file (no line) and system output"
        shown.append(
            Shown(name or "(No name)", classname, state, name or "(No name)", text, "", file, note)
        )
    return shown


# ---------------------------------------------------------------------------------------------
# the report


CONSUMERS: dict[str, tuple[str, Callable[..., list[Shown]]]] = {
    "dorny/test-reporter (java-junit)": (DORNY, parse_dorny_java_junit),
    "dorny/test-reporter (phpunit-junit)": (DORNY, parse_dorny_phpunit_junit),
    "mikepenz/action-junit-report": (MIKEPENZ, parse_mikepenz),
    "EnricoMi/publish-unit-test-result-action": (ENRICOMI, parse_enricomi),
    "GitLab (junit.rb)": (GITLAB_JUNIT, parse_gitlab),
}

# what each consumer's title / text / details are, for the listing
SURFACES = {
    "dorny/test-reporter (java-junit)": (
        "annotation title (report line when no annotation)",
        "lines under `❌ name` in the job summary = the annotation's `Error:`",
        "annotation raw details",
    ),
    "mikepenz/action-junit-report": ("annotation title", "annotation message", "raw details"),
    "EnricoMi/publish-unit-test-result-action": (
        "annotation title",
        "annotation message",
        "annotation 'Raw output'",
    ),
    "GitLab (junit.rb)": ("test name (Tests tab, MR widget)", "test case's System output", "-"),
}
SURFACES["dorny/test-reporter (phpunit-junit)"] = SURFACES["dorny/test-reporter (java-junit)"]

# read from the code (file:line at the commits above), not measured
READS_LOCATION = {
    "dorny/test-reporter (java-junit)": "only a stack line `at p.C.m(F.java:N)` of a tracked file",
    "dorny/test-reporter (phpunit-junit)": "testcase `file` (if tracked) + `line`; else `x.php:N`",
    "mikepenz/action-junit-report": "testcase `file`/`line` (else failure's, suite's; else body)",
    "EnricoMi/publish-unit-test-result-action": "testcase `file` and `line`",
    "GitLab (junit.rb)": "testcase `file` only (no line)",
}
RERUNS = {
    "dorny/test-reporter (java-junit)": "ignored: a flaky case passes, rerun text unseen",
    "dorny/test-reporter (phpunit-junit)": "ignored: a flaky case passes, rerun text unseen",
    "mikepenz/action-junit-report": "counts `flakyFailure` as retries (flaky_summary); "
    "`flakyError`, `rerun*` ignored",
    "EnricoMi/publish-unit-test-result-action": "ignored; repeated testcases of a test fold into "
    "'N out of M runs failed'",
    "GitLab (junit.rb)": "ignored: a flaky case passes, rerun text unseen",
}

PROBE_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="probe" tests="3" failures="1" errors="1" skipped="1">
    <testcase classname="probe" name="fails"><failure message="MSG-F" type="TYPE-F">BODY-F one
BODY-F two
BODY-F three</failure></testcase>
    <testcase classname="probe" name="errs"><error message="MSG-E" type="TYPE-E">BODY-E one
BODY-E two</error></testcase>
    <testcase classname="probe" name="skips">
      <skipped message="MSG-S" type="TYPE-S">BODY-S</skipped>
    </testcase>
  </testsuite>
</testsuites>
"""


def _parts(text: str, message: str, kind: str, body: str) -> str:
    """Which of the element's message, type and body a text is made of."""
    parts = []
    if f"{kind}: {message}" in text:
        parts.append("`type: message`")
    elif message in text:
        parts.append("message")
    elif kind in text:
        parts.append("type")
    lines = body.splitlines()
    if body in text:
        parts.append("body")
    elif lines and lines[0] in text:
        shown = sum(1 for line in lines if line in text)
        parts.append(f"body's first {shown} lines" if shown > 1 else "body's first line")
    return " + ".join(parts)


def _shows(shown: Shown, message: str, kind: str, body: str) -> str:
    head = _parts(shown.title + "\n" + shown.text, message, kind, body)
    if not head and shown.text.startswith("probe.xml"):
        head = "the results file's name"
    elif not head:
        head = f"“{shown.text.splitlines()[0]}”" if shown.text else "nothing"
    if head == "body":
        head = "body only (message and type dropped)"
    more = _parts(shown.details, message, kind, body)
    return f"{head}; details: {more}" if more else head


def _reason(skipped: Shown) -> str:
    seen = "\n".join((skipped.title, skipped.text, skipped.details))
    parts = [part for part, marker in (("message", "MSG-S"), ("body", "BODY-S")) if marker in seen]
    if not parts:
        return "no"
    reason = "yes: " + " + ".join(parts)
    if skipped.text.startswith("{"):
        reason += " (in a JSON object of its attributes)"
    return reason


def summary_rows() -> list[list[str]]:
    """One row per consumer: what its port shows for the probe's failure, error and skip."""
    rows = []
    for consumer, (_, parse) in CONSUMERS.items():
        kwargs = {"result_file": "probe.xml"} if parse is parse_enricomi else {}
        by_name = {s.name: s for s in parse(PROBE_XML, **kwargs)}
        fails, errs, skips = by_name["fails"], by_name["errs"], by_name["skips"]
        error = _shows(errs, "MSG-E", "TYPE-E", "BODY-E one\nBODY-E two")
        if errs.state != "error":
            error += f" (counted {errs.state})"
        reason = _reason(skips)
        bodiless = {
            s.name: s for s in parse(PROBE_XML.replace(">BODY-S</skipped>", "/>"), **kwargs)
        }
        other = _reason(bodiless["skips"])
        if other != reason:
            reason += f"; without a body: {other}"
        rows.append(
            [
                consumer,
                _shows(fails, "MSG-F", "TYPE-F", "BODY-F one\nBODY-F two\nBODY-F three"),
                error,
                reason,
                READS_LOCATION[consumer],
                RERUNS[consumer],
            ]
        )
    return rows


HEADERS = ["consumer", "failure: shows", "error: shows", "skipped: shows reason?"]
HEADERS += ["reads file/line", "reruns/flaky"]


def markdown_table(rows: list[list[str]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def text_table(rows: list[list[str]]) -> str:
    lines = []
    for row in rows:
        lines.append(row[0])
        lines += [
            f"  {header}: {value}" for header, value in zip(HEADERS[1:], row[1:], strict=True)
        ]
    return "\n".join(lines)


def _glance(text: str) -> str:
    if not text:
        return "(none)"
    first = text.splitlines()[0] if text.splitlines() else ""
    count = len(text.splitlines())
    return f"{first!r}  [{len(text)} chars, {count} line{'s' if count != 1 else ''}]"


def _not_plain(xml_text: str) -> set[tuple[str, str]]:
    """(classname, name) of the testcases that are not a plain pass."""
    tags = {"failure", "error", "skipped", *RERUN_TAGS}
    return {
        (tc.get("classname", ""), tc.get("name", ""))
        for tc in _root(xml_text).iter("testcase")
        if any(child.tag in tags for child in tc) or tc.get("status") in ("disabled", "ignored")
    }


def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files"], capture_output=True, text=True, check=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return out.splitlines()


def listing(xml_text: str, result_file: str, tracked: list[str]) -> str:
    wanted = _not_plain(xml_text)
    out = []
    for consumer, (commit, parse) in CONSUMERS.items():
        title, text, details = SURFACES[consumer]
        out.append(f"== {consumer} @ {commit[:12]}")
        out.append(f"   title = {title}; text = {text}; details = {details}")
        if parse is parse_enricomi:
            shown = parse(xml_text, result_file=result_file)
        elif parse in (parse_dorny_java_junit, parse_dorny_phpunit_junit):
            shown = parse(xml_text, tracked_files=tracked)
        else:
            shown = parse(xml_text)
        read = set()
        for s in shown:
            read.add((s.classname, s.name))
            if (s.classname, s.name) not in wanted and s.state == "passed":
                continue
            out.append(f"  {s.classname} :: {s.name}  [{s.state}]")
            out.append(f"    title:   {_glance(s.title)}")
            out.append(f"    text:    {_glance(s.text)}")
            out.append(f"    details: {_glance(s.details)}")
            if s.location:
                out.append(f"    at:      {s.location}")
            if s.note:
                out.append(f"    note:    {s.note}")
        for classname, name in sorted(wanted - read):
            out.append(f"  {classname} :: {name}  [not read by this consumer]")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="a JUnit XML file")
    parser.add_argument("--markdown", action="store_true", help="the table as GitHub Markdown")
    args = parser.parse_args(argv)
    xml_text = args.file.read_text(encoding="utf-8")
    print(listing(xml_text, str(args.file), _tracked_files()))
    rows = summary_rows()
    print(markdown_table(rows) if args.markdown else text_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
