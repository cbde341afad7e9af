"""Where the Jinja templates live: a user's ``--template-dir`` first, then the ones shipped in
the wheel (``ci_eval/templates``), then the repository's ``templates/`` (editable installs)."""

from __future__ import annotations

from pathlib import Path

_PACKAGED = Path(__file__).resolve().parent / "_templates"
_REPO = Path(__file__).resolve().parent.parent / "templates"


def template_dirs(user_dir: Path | None = None) -> list[Path]:
    dirs = [user_dir] if user_dir else []
    dirs += [d for d in (_PACKAGED, _REPO) if d.is_dir()]
    return dirs
