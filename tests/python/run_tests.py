"""Runs the package's tests with pytest (all of them, or what the arguments
name); exit 77 (ctest's skip) when pytest or numpy is missing, saying which."""

import os
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
# The tests use no installed pytest plugin (Debian's python3-hypothesis
# registers one): none is loaded, which saves each run importing them.
os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *(sys.argv[1:] or [str(HERE)])]))
