"""A connector's optional part (verify, recordings to replay, notices, a warning) is declared in
the protocol: ci-eval's connectors inherit its defaults, a plugin's gets those it lacks."""

from __future__ import annotations

from typing import Any

from ci_eval.connectors.base import Features, with_features


class Bare:
    kind = "bare"

    def describe(self) -> str:
        return "a plugin's agent"

    def open(self, eval_set_id: str, case: Any, run: int) -> Any:
        return None

    def close(self) -> None:
        return None


class Talkative(Bare):
    opens_ahead = True
    warning = "runs as root"

    def notices(self, results: Any) -> list[str]:
        return ["warning: one recording edited since"]


def test_a_plugins_connector_gets_the_optional_part_it_lacks() -> None:
    connector = with_features(Bare())
    assert (connector.kind, connector.describe()) == ("bare", "a plugin's agent")
    assert connector.verify([]) is None and connector.max_recordings() == 1
    assert connector.notices(None) == [] and connector.warning is None
    assert connector.opens_ahead is False


def test_a_plugins_own_optional_features_are_its_own() -> None:
    connector = with_features(Talkative())
    assert connector.notices(None) == ["warning: one recording edited since"]
    assert (connector.warning, connector.opens_ahead) == ("runs as root", True)


def test_ci_evals_connectors_are_used_as_they_are() -> None:
    from ci_eval.connectors.replay import ReplayConnector

    replay = ReplayConnector([])
    assert isinstance(replay, Features) and with_features(replay) is replay
