"""Runs the package's tests with pytest; exit 77 (ctest's skip) when pytest
or numpy is missing, saying which."""

import pathlib
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as missing:
    print(f"skipped: {missing.name} is not installed for {sys.executable}")
    sys.exit(77)

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", str(pathlib.Path(__file__).resolve().parent)]))
