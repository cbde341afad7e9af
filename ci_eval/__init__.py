"""ci-eval: replay agent eval sets in CI and report them where people look."""

__version__ = "0.1.0"
