"""Agent connectors: one module each, registered here by kind. Adding one is a module with a
class following ``base.Connector`` plus one ``register(KIND, factory)`` call; ``--agent KIND``
(``[agent] kind``) then builds it."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ci_eval import ACTION_REPO, IMAGE, __version__
from ci_eval.connectors.base import AgentError, Connector, with_features
from ci_eval.errors import InputError
from ci_eval.settings import AgentSettings
from ci_eval.settings.model import ci_credential

if TYPE_CHECKING:
    from ci_eval.net.http import HttpSettings


def _http_settings(agent: AgentSettings, timeout: float, retries: int) -> HttpSettings:
    # requests loads only for the HTTP connectors
    from ci_eval.net.http import HttpSettings

    if agent.token_env:  # build_connector found no such variable in the environment
        raise InputError(
            f"the environment variable {agent.token_env} (the agent's token) is not set"
        )
    return HttpSettings(timeout=timeout, retries=retries, headers=dict(agent.headers))


def _need(agent: AgentSettings, key: str) -> str:
    value = getattr(agent, key)
    if not value:
        raise InputError(f"{agent.name('kind')} {agent.kind} needs {agent.name(key)}")
    return value


def _url(agent: AgentSettings) -> str:
    """The agent's URL, refused before any call unless it is http(s) with a host and a port
    that can be (a typo is the user's to fix: exit 2, not an unreachable agent's 3)."""
    url = _need(agent, "url")
    wrong = url_problem(url)
    if wrong:
        raise InputError(f"{agent.name('url')} {url}: {wrong}, e.g. {EXAMPLE_URL}")
    return url


EXAMPLE_URL = "http://127.0.0.1:8000"


def url_problem(url: str) -> str | None:
    """What keeps ``url`` from being an agent's address (``--agent-url``, ``--control-url``),
    or None."""
    from urllib.parse import urlsplit

    if any(c.isspace() for c in url):
        return "it has a space"
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        return "expected an http:// or https:// URL"
    if not parts.hostname:
        return "the URL names no host"
    try:
        port = parts.port
    except ValueError:  # not a number, or past 65535
        port = 0
    return "the port must be a number from 1 to 65535" if port == 0 else None


def _adk_http(
    agent: AgentSettings, timeout: float, retries: int, child_env: Mapping[str, str] | None
) -> Connector:
    from ci_eval.connectors.adk_http import AdkHttpConnector

    return AdkHttpConnector(
        _url(agent),
        _http_settings(agent, timeout, retries),
        agent.app_name,
        agent.user_id,
    )


def adk_missing_message(env: Mapping[str, str]) -> str | None:
    """Why ``agent: adk`` cannot run here, in one line naming what to use instead; None when
    google-adk is installed. Checked once before any case, not per case."""
    try:
        if importlib.util.find_spec("google.adk") is not None:
            return None
    except (ImportError, ValueError):
        pass
    if env.get("CI_EVAL_IMAGE") == "slim":
        return (
            "agent adk needs google-adk, which the slim ci-eval image leaves out: use the "
            f"image with it, `uses: {ACTION_REPO}/adk@v{__version__}` "
            f"(image {IMAGE}:v{__version__}-adk), same inputs"
        )
    if env.get("CI_EVAL_ACTION") == "setup":  # the composite action installs what it is told
        return (
            "agent adk needs google-adk, which the action installs when it knows the agent is "
            "adk: set the action's input `agent: adk` (or [agent] kind in the ci-eval.toml the "
            "action reads)"
        )
    return "agent adk needs google-adk: pip install 'ci-eval[adk]'"


def _adk(
    agent: AgentSettings, timeout: float, retries: int, child_env: Mapping[str, str] | None
) -> Connector:
    from ci_eval.connectors.adk_inproc import AdkInProcessConnector

    missing = adk_missing_message(os.environ)
    if missing:
        raise InputError(missing)

    return AdkInProcessConnector(_need(agent, "module"), timeout, agent.app_name, agent.user_id)


def _http(
    agent: AgentSettings, timeout: float, retries: int, child_env: Mapping[str, str] | None
) -> Connector:
    from ci_eval.connectors.http import HttpConnector

    return HttpConnector(_url(agent), _http_settings(agent, timeout, retries))


def _command(
    agent: AgentSettings, timeout: float, retries: int, child_env: Mapping[str, str] | None
) -> Connector:
    from ci_eval.connectors import identity
    from ci_eval.connectors.command import CommandConnector

    try:
        connector = CommandConnector(_need(agent, "command"), timeout, env=child_env, cwd=agent.cwd)
    except AgentError as exc:
        raise InputError(str(exc)) from None
    argv = connector.args if isinstance(connector.args, list) else [connector.program]
    choice = identity.choose(
        agent.user,
        agent.name("user"),
        Path(agent.cwd or os.getcwd()),
        argv,
        (os.environ if child_env is None else child_env).get("PATH"),
    )
    connector.user, connector.warning = choice.identity, choice.warning
    return connector


def _replay(
    agent: AgentSettings, timeout: float, retries: int, child_env: Mapping[str, str] | None
) -> Connector:
    from ci_eval.connectors.replay import ReplayConnector

    _need(agent, "replay")
    return ReplayConnector([Path(p) for p in agent.replay], pick=agent.replay_pick)


# (the agent's settings, each turn's timeout in seconds, retries, the environment a child
# process gets (None: ci-eval's own)) -> the connector
ConnectorFactory = Callable[[AgentSettings, float, int, Mapping[str, str] | None], Connector]

CONNECTORS: dict[str, ConnectorFactory] = {}


def register(kind: str, factory: ConnectorFactory) -> ConnectorFactory:
    """Make ``--agent KIND`` build its connector with ``factory``."""
    CONNECTORS[kind] = factory
    return factory


register("adk-http", _adk_http)
register("adk", _adk)
register("http", _http)
register("command", _command)
register("replay", _replay)


def build_connector(
    agent: AgentSettings,
    timeout: float,
    retries: int,
    child_env: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Connector:
    """``child_env`` is the environment a child-process agent gets (default: ci-eval's own);
    the agent's token (``token_env``) is read from ``env`` (default: ci-eval's own)."""
    if not agent.kind:
        raise InputError(no_agent_message(agent))
    if agent.token_env and ci_credential(agent.token_env):
        raise InputError(
            f"{agent.name('token_env')} {agent.token_env}: a CI credential; the agent's endpoint "
            "never gets the job's token — name the variable that holds the agent's own"
        )
    token = (os.environ if env is None else env).get(agent.token_env or "")
    if agent.token_env and token:
        auth = {"Authorization": f"Bearer {token}"}
        agent = dataclasses.replace(agent, headers={**agent.headers, **auth}, token_env=None)
    factory = CONNECTORS.get(agent.kind)
    if factory is None:
        raise InputError(
            f"unknown agent kind {agent.kind!r}; choose one of: " + ", ".join(CONNECTORS)
        )
    if not agent.otlp:
        return with_features(factory(agent, timeout, retries, child_env))
    from ci_eval.connectors.live_spans import listen

    live = listen(agent, os.environ if env is None else env)
    try:
        inner = with_features(factory(agent, timeout, retries, live.child_env(child_env)))
    except BaseException:
        live.receiver.close()
        raise
    return live.around(inner)


def no_agent_message(agent: AgentSettings) -> str:
    """What to set when no agent kind is given, in the words of the settings' source."""
    name = agent.name("kind")
    return (
        f"no agent: give {name}{' KIND' if name.startswith('--') else ''} ("
        + ", ".join(CONNECTORS)
        + ") or set [agent] kind in ci-eval.toml"
    )
