"""Scoring speed: 10,000 invocations scored with tool_trajectory_avg_score (EXACT) and
response_match_score, by ci-eval and by google-adk 2.13's own evaluators in the same run.

Prints both times and the ratio (target: ci-eval at least 5x faster). Both sides get the same
already-parsed invocations, so parsing is not counted for either.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ci_eval.metrics import rouge  # noqa: E402
from ci_eval.metrics.adk import response_match, tool_trajectory  # noqa: E402
from ci_eval.metrics.base import ScoreContext  # noqa: E402
from ci_eval.model import Invocation  # noqa: E402
from ci_eval.model.metric_spec import MetricSpec  # noqa: E402
from tests.pairs import pairs  # noqa: E402

N = 10_000


def main() -> None:
    try:
        from google.adk.evaluation.eval_case import Invocation as AdkInvocation
        from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
        from google.adk.evaluation.response_evaluator import ResponseEvaluator
        from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
    except ImportError:
        print("score: google-adk is not installed (pip install -e '.[test]'); skipped")
        return
    expected, actual = pairs(7, N)
    ours = (
        [Invocation.model_validate(e) for e in expected],
        [Invocation.model_validate(a) for a in actual],
    )
    theirs = (
        [AdkInvocation.model_validate(e) for e in expected],
        [AdkInvocation.model_validate(a) for a in actual],
    )
    trajectory = TrajectoryEvaluator(
        eval_metric=EvalMetric(
            metric_name="tool_trajectory_avg_score",
            criterion=ToolTrajectoryCriterion(threshold=1.0),
        )
    )
    response = ResponseEvaluator(threshold=0.8, metric_name="response_match_score")

    def adk() -> tuple[float, float]:
        return (
            trajectory.evaluate_invocations(theirs[1], theirs[0]).overall_score,
            response.evaluate_invocations(theirs[1], theirs[0]).overall_score,
        )

    def ci_eval() -> tuple[float, float]:
        rouge.unicode_tokens.cache_clear()  # no head start from an earlier repetition
        rouge._unigrams.cache_clear()
        ctx = ScoreContext()
        return (
            tool_trajectory(ours[0], ours[1], MetricSpec("t", 1.0), ctx)[0],
            response_match(ours[0], ours[1], MetricSpec("r", 0.8), ctx)[0],
        )

    def best(fn: Callable[[], tuple[float, float]]) -> tuple[float, tuple[float, float]]:
        times = []
        for _ in range(3):
            # as timeit does: no garbage collection while timing, so neither side pays for
            # scanning the other's objects
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                value = fn()
                times.append(time.perf_counter() - start)
            finally:
                gc.enable()
        return min(times), value

    adk_time, (adk_t, adk_r) = best(adk)
    our_time, (our_t, our_r) = best(ci_eval)
    assert abs(adk_t - our_t) < 1e-12 and abs(adk_r - our_r) < 1e-12, "scores differ"
    print(
        f"score: {N} invocations x 2 metrics (best of 3): ADK {adk_time:.3f} s, ci-eval "
        f"{our_time:.3f} s, ci-eval is {adk_time / our_time:.1f}x faster (target >= 5x); "
        f"same scores ({our_t:.4f}, {our_r:.4f})"
    )


if __name__ == "__main__":
    main()
