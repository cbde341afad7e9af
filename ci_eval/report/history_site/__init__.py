"""``ci-eval history``: main's history as a static site — one page for the suite (each eval set's
pass rate per push with its 95 % interval, the cases that flip most, tokens, cost and p95 run
latency per push) and one per case (its runs) — plain HTML with SVG charts, readable without
JavaScript or a network. :mod:`.data` computes what the pages say from the baseline (pure;
:func:`flip_rates` is also what a quarantine would start from), :mod:`.site` words, draws and
writes them."""

from ci_eval.report.history_site.data import CaseFlips, flip_rates

__all__ = ["CaseFlips", "flip_rates"]
