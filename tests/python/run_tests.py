"""Runs the package's tests with pytest (all of them, or what the arguments
name); exit 77 (ctest's skip) when pytest or numpy is missing, saying which."""

import pathlib
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as missing:
    print(f"skipped: {missing.name} is not installed for {sys.executable}")
    sys.exit(77)

# Arguments go to pytest (ctest runs the resume harness on its own); none: every test here.
HERE = pathlib.Path(__file__).resolve().parent
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *(sys.argv[1:] or [str(HERE)])]))
