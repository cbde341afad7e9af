"""rouge-score's code without the price of importing nltk.

rouge-score stems with nltk's ``PorterStemmer``, and importing the ``nltk`` package is slow
(it pulls in scipy, scikit-learn and pandas when they are installed). The files
rouge-score needs (nltk's ``stem/porter.py``, rouge-score's ``tokenizers``, ``scoring`` and
``rouge_scorer``) use nothing of that: they are loaded here by path from the installed packages
with their imports of nltk, numpy and absl answered lazily. The code that runs is the installed
code, byte for byte; only what it imports is deferred until (if ever) it is used — nltk's sentence
splitter for ``rougeLsum`` with split summaries, numpy for ``score_multi``.

When nltk is already imported (by an agent under test, say), its own modules are used.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any


class _Lazy:
    """Stands for a module; imports it on first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


class _QuietAbslLogging(_Lazy):
    """absl's logging, whose import is slow: rouge-score only logs
    ``info("Using default tokenizer.")``, which absl drops at its default verbosity (warning);
    anything louder goes to the real absl."""

    def info(self, *args: Any, **kwargs: Any) -> None:
        return None

    def debug(self, *args: Any, **kwargs: Any) -> None:
        return None


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)  # finds a top-level package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"{name} (a dependency of ci-eval's ROUGE) is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _exec_file(name: str, path: Path, overrides: dict[str, Any] | None = None) -> ModuleType:
    """Run one source file as a module of its own (not registered in ``sys.modules``); its
    ``import X`` / ``from X import a`` statements get ``overrides[X]`` when it has the names."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    if overrides:

        def import_(
            name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
        ) -> Any:
            stub = overrides.get(name) if level == 0 else None
            if stub is not None and all(hasattr(stub, f) for f in fromlist or ()):
                return stub
            # anything a later version adds goes to the real import: slower, never different
            return builtins.__import__(name, globals, locals, fromlist, level)

        module.__dict__["__builtins__"] = {**builtins.__dict__, "__import__": import_}
    spec.loader.exec_module(module)
    return module


def porter_stemmer_from_file() -> type:
    """nltk's ``PorterStemmer`` from ``nltk/stem/porter.py``. That file imports ``StemmerI``
    (an abstract base class, loaded from its own file too), and ``redos`` and ``safe_print``,
    which only its ``demo()`` uses."""
    stem_dir = _package_dir("nltk") / "stem"
    api = _exec_file("_ci_eval_nltk_stem_api", stem_dir / "api.py")
    porter = _exec_file(
        "_ci_eval_nltk_stem_porter",
        stem_dir / "porter.py",
        {
            "nltk": SimpleNamespace(redos=_Lazy("nltk.redos")),
            "nltk.stem.api": api,
            "nltk.termsec": SimpleNamespace(safe_print=print),
        },
    )
    return porter.PorterStemmer  # type: ignore[no-any-return]


def porter_stemmer_class() -> type:
    """The class rouge-score's tokenizer instantiates."""
    loaded = sys.modules.get("nltk.stem.porter")
    if loaded is not None:  # someone already paid for nltk: the very same class
        return loaded.PorterStemmer  # type: ignore[no-any-return]
    return porter_stemmer_from_file()


def rouge_scorer_from_file() -> ModuleType:
    """rouge-score's ``rouge_scorer`` module, with ``tokenizers`` using the stemmer above."""
    root = _package_dir("rouge_score")
    from rouge_score import tokenize  # imports re and six only

    numpy = _Lazy("numpy")
    scoring = _exec_file("_ci_eval_rouge_scoring", root / "scoring.py", {"numpy": numpy})
    tokenizers = _exec_file(
        "_ci_eval_rouge_tokenizers",
        root / "tokenizers.py",
        {
            "nltk.stem": SimpleNamespace(
                porter=SimpleNamespace(PorterStemmer=porter_stemmer_class())
            ),
            "rouge_score": SimpleNamespace(tokenize=tokenize),
        },
    )
    return _exec_file(
        "_ci_eval_rouge_scorer",
        root / "rouge_scorer.py",
        {
            "nltk": _Lazy("nltk"),
            "numpy": numpy,
            "absl": SimpleNamespace(logging=_QuietAbslLogging("absl.logging")),
            "rouge_score": SimpleNamespace(scoring=scoring, tokenizers=tokenizers),
        },
    )


@lru_cache(maxsize=1)
def rouge_scorer() -> ModuleType:
    """``rouge_score.rouge_scorer``: the imported one when nltk is already there, else the
    same file loaded without importing nltk."""
    loaded = sys.modules.get("rouge_score.rouge_scorer")
    if loaded is not None:
        return loaded
    if "nltk" in sys.modules:
        return importlib.import_module("rouge_score.rouge_scorer")
    return rouge_scorer_from_file()
