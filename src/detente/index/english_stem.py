"""The Snowball English stemmer alone, without the other 30 languages.

``import snowballstemmer`` imports every language's stemmer (about 20 ms, paid by every
command that compares texts, such as ``detente claim open``); the English one is three
small modules (``english_stemmer``, ``basestemmer``, ``among``, about 1 ms). They are
loaded here from the installed package's directory under a private package name, so the
package's ``__init__`` never runs and ``import snowballstemmer`` elsewhere is unaffected.
Where the package cannot be found that way (a zip import, a stub), the package is
imported as usual.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

__all__ = ["english_stemmer"]

_PRIVATE = "_detente_snowball_english"


def english_stemmer() -> Any:
    """A new Snowball English stemmer (``stemWord(word) -> stem``; not thread-safe)."""
    try:
        module = importlib.import_module(f"{_PRIVATE}.english_stemmer")
    except ImportError:
        module = None
    if module is None or not hasattr(module, "EnglishStemmer"):
        import snowballstemmer

        return snowballstemmer.stemmer("english")
    return module.EnglishStemmer()


def _register() -> None:
    """Register the private package over the installed package's directory."""
    if _PRIVATE in sys.modules:
        return
    spec = importlib.util.find_spec("snowballstemmer")  # finds, does not execute
    if spec is None or not spec.submodule_search_locations:
        return
    package = types.ModuleType(_PRIVATE)
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules[_PRIVATE] = package


_register()
