"""Shared fixtures of the Python package's tests: the extshuffle program
they compare against, from the build tree (EXTSHUFFLE_BINARY overrides)."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def binary():
    path = pathlib.Path(os.environ.get("EXTSHUFFLE_BINARY", REPO / "build" / "extshuffle"))
    if not path.exists():
        pytest.skip(f"no extshuffle program at {path}")
    return str(path)


@pytest.fixture(scope="session")
def cli_order(binary):
    """The order `extshuffle -i 0-(n-1) --seed seed [-n K] [knobs]` prints, as uint64."""
    def order(n, seed, head=None, leaf_records=None, fanout=None):
        command = [binary, "-i", f"0-{n - 1}", "--seed", str(seed), "-q"]
        if head is not None:
            command += ["-n", str(head)]
        if leaf_records:
            command += ["--leaf-records", str(leaf_records)]
        if fanout:
            command += ["--fanout", str(fanout)]
        out = subprocess.run(command, check=True, capture_output=True).stdout
        return np.array(out.split(), dtype=np.uint64)
    return order
