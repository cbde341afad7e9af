"""The README's picture of the PR comment: the ``reviewer()`` scenario's comment
(``tests/report/scenarios.py``), rendered as github.com renders it (cmark-gfm, through
``benchmarks.reviewer.gfm``) in GitHub's stylesheet, photographed by headless Chromium.

    python -m docs.screenshot [--out docs/comment.png] [--width 960]
    python -m docs.screenshot --scenario passing --out docs/comment-passing.png

Needs, besides the ``test`` extra (cmarkgfm):

- ``chromium`` on the PATH (or ``--chromium PATH``), with a colour emoji font for the icons
  (Debian: ``fonts-noto-color-emoji``);
- GitHub's Markdown stylesheet, the npm package ``github-markdown-css``: fetched once with
  ``npm pack`` into ``~/.cache/ci-eval-docs/`` (or ``--css FILE``); without npm, an unpacked
  copy at ``/tmp/ghcss/package/github-markdown-light.css`` is used.

Not part of the test suite. Chromium runs twice: once to measure the comment's height (a script
writes it into the DOM it dumps), once to take the picture at that height.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file: python docs/screenshot.py
    sys.path.insert(0, str(REPO))

CACHE = Path.home() / ".cache" / "ci-eval-docs"
FALLBACK_CSS = Path("/tmp/ghcss/package/github-markdown-light.css")
CSS_NAME = "github-markdown-light.css"
LINK = "https://github.com/acme/shop-agent/actions/runs/123"
CONTENT_WIDTH = 900  # px: the comment's box, about a pull request's conversation column

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ci-eval PR comment</title>
<style>{css}</style>
<style>
  body {{ margin: 0; padding: 24px 30px; background: #ffffff; }}
  .comment {{ width: {width}px; border: 1px solid #d1d9e0; border-radius: 6px; }}
  .comment-header {{ padding: 8px 16px; background: #f6f8fa; border-bottom: 1px solid #d1d9e0;
    border-radius: 6px 6px 0 0; color: #59636e; font: 14px/1.5 -apple-system,
    BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }}
  .comment-header b {{ color: #1f2328; }}
  .markdown-body {{ padding: 16px; }}
</style></head>
<body>
<div class="comment">
<div class="comment-header"><b>github-actions</b> bot commented</div>
<article class="markdown-body">
{body}
</article>
</div>
<script>
  addEventListener("load", () => {{
    const box = document.querySelector(".comment").getBoundingClientRect();
    document.body.dataset.height = Math.ceil(box.bottom + window.scrollY) + 24;
  }});
</script>
</body></html>
"""


def stylesheet(explicit: Path | None = None) -> str:
    """GitHub's light Markdown stylesheet: ``explicit``, else the cached npm package (fetched
    with ``npm pack`` when it is not there), else the unpacked fallback."""
    if explicit is not None:
        return explicit.read_text("utf-8")
    cached = CACHE / "package" / CSS_NAME
    if not cached.is_file() and shutil.which("npm"):
        CACHE.mkdir(parents=True, exist_ok=True)
        try:
            packed = subprocess.run(
                ["npm", "pack", "github-markdown-css", "--silent"],
                cwd=CACHE,
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            ).stdout.split()
            with tarfile.open(CACHE / packed[-1]) as tar:
                tar.extractall(CACHE, filter="data")
        except (subprocess.SubprocessError, OSError, IndexError, tarfile.TarError) as exc:
            print(f"npm pack github-markdown-css failed ({exc}); using {FALLBACK_CSS}")
    for path in (cached, FALLBACK_CSS):
        if path.is_file():
            return path.read_text("utf-8")
    raise SystemExit(f"no {CSS_NAME}: install npm, or pass --css FILE")


def comment_html(scenario: str = "reviewer") -> str:
    """The comment of ``reviewer()`` (a gate that fails) or ``passing()`` (one that passes,
    and says what it could have detected)."""
    from benchmarks.reviewer import gfm
    from ci_eval.report.markdown import render_comment
    from tests.report import scenarios

    results = getattr(scenarios, scenario)()
    return gfm(render_comment(results, "ci/evals", link=LINK), comment=True)


def chromium(binary: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


def page_height(binary: str, url: str, width: int) -> int:
    dom = chromium(
        binary, f"--window-size={width},2000", "--virtual-time-budget=3000", "--dump-dom", url
    ).stdout
    m = re.search(r'data-height="(\d+)"', dom)
    if not m:
        raise SystemExit("chromium did not report the page's height")
    return int(m[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "comment.png")
    parser.add_argument("--width", type=int, default=960)
    parser.add_argument("--css", type=Path, default=None)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--scenario", choices=("reviewer", "passing"), default="reviewer")
    args = parser.parse_args(argv)
    body = comment_html(args.scenario)
    page = PAGE.format(css=stylesheet(args.css), width=CONTENT_WIDTH, body=body)
    with tempfile.TemporaryDirectory(prefix="ci-eval-screenshot-") as folder:
        source = Path(folder) / "comment.html"
        source.write_text(page, "utf-8")
        url = source.as_uri()
        height = page_height(args.chromium, url, args.width)
        out = args.out.resolve()
        out.parent.mkdir(parents=True, exist_ok=True)
        chromium(args.chromium, f"--window-size={args.width},{height}", f"--screenshot={out}", url)
    print(f"{out}: {args.width}x{height} px, {out.stat().st_size:,} bytes ({html.escape(url)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
