"""``.ci-eval/accept.toml``: how a pull request accepts the score changes it makes on purpose.

The file is committed in the pull request, so the acceptance is reviewed with the code::

    [[accept]]
    case = "support:refund_policy"        # SET_ID:CASE_ID; fnmatch patterns; "*" also
    metrics = ["response_match_score"]    #   accepts a suite-wide drop. metrics: optional
    reason = "new refund wording (#123)"  # required: said wherever the regression is shown

A matched regression is shown as accepted and does not block. Once main's history has the new
scores the entry matches nothing and ci-eval says to remove it.
"""

from __future__ import annotations

from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.io import tomltext
from ci_eval.model.comparison import Acceptance

DEFAULT_PATH = ".ci-eval/accept.toml"


def load(path: Path, required: bool = False) -> list[Acceptance]:
    if not path.is_file():
        if required:
            raise InputError("no such acceptance file", path=str(path))
        return []
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=str(path)) from None
    data = tomltext.parse(text, str(path))
    unknown = set(data) - {"accept"}
    if unknown:
        raise InputError(
            f"unknown key(s) {', '.join(sorted(unknown))}; the file holds [[accept]] entries",
            path=str(path),
        )
    entries = data.get("accept", [])
    if not isinstance(entries, list):
        raise InputError("accept must be an array of tables ([[accept]])", path=str(path))
    out = []
    for i, entry in enumerate(entries):
        where = f"accept[{i}]"
        if not isinstance(entry, dict):
            raise InputError("expected a table", path=str(path), json_path=where)
        extra = set(entry) - {"case", "metrics", "reason"}
        if extra:
            raise InputError(
                f"unknown key(s) {', '.join(sorted(extra))}; known: case, metrics, reason",
                path=str(path),
                json_path=where,
            )
        case, reason, metrics = entry.get("case"), entry.get("reason"), entry.get("metrics", [])
        if not isinstance(case, str) or not case.strip():
            raise InputError(
                'case is required: "SET_ID:CASE_ID" (or a pattern)',
                path=str(path),
                json_path=where,
            )
        if not isinstance(reason, str) or not reason.strip():
            raise InputError(
                "reason is required: say why the new scores are right",
                path=str(path),
                json_path=where,
            )
        if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
            raise InputError("metrics must be a list of names", path=str(path), json_path=where)
        out.append(Acceptance(case.strip(), " ".join(reason.split()), list(metrics)))
    return out


def _entries(text: str) -> set[tuple[str, tuple[str, ...], str]]:
    try:
        data = tomltext.parse(text, "")
    except InputError:
        return set()
    out = set()
    for entry in data.get("accept", []) if isinstance(data.get("accept"), list) else []:
        if isinstance(entry, dict):
            metrics = entry.get("metrics") or []
            out.add(
                (
                    str(entry.get("case")),
                    tuple(str(m) for m in metrics) if isinstance(metrics, list) else (),
                    str(entry.get("reason")),
                )
            )
    return out


def changes(path: Path, base_text: str | None) -> list[str]:
    """The entries a pull request added to (+) or removed from (-) the acceptance file, against
    the merge base's copy (``base_text``; "" when it has none): it is the PR's to change, and
    the verdict says what it changed."""
    if base_text is None:
        return []
    mine = _entries(path.read_text("utf-8")) if path.is_file() else set()
    theirs = _entries(base_text)
    said = []
    for sign, entries in (("+", mine - theirs), ("-", theirs - mine)):
        for case, metrics, reason in sorted(entries):
            which = f" ({', '.join(metrics)})" if metrics else ""
            said.append(f"{path.as_posix()}: {sign} {case}{which}: {reason}")
    return said
