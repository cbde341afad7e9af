"""ci-eval: replay agent eval sets in CI and report them where people look."""

__version__ = "0.1.0"
# Where releases publish the action: action.yml runs IMAGE:v<version>, adk/action.yml the same
# with "-adk" (tests check both against __version__).
ACTION_REPO = "acme/ci-eval"
IMAGE = "ghcr.io/acme/ci-eval"
