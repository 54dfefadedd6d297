"""setup.py under a python3 whose setuptools cannot build a wheel (no
'wheel' package, setuptools before 70.1: the pyenv python3 first on PATH
on the development machine): pip's first step, dist_info, gets one line
naming the command to use instead of "invalid command 'bdist_wheel'"."""

import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]

WITHOUT_WHEEL = r"""
import sys
sys.modules["wheel"] = None                              # import wheel fails
sys.modules["setuptools.command.bdist_wheel"] = None     # and setuptools' own (70.1 on)
sys.argv = ["setup.py", "dist_info"]
exec(compile(open("setup.py").read(), "setup.py", "exec"), {"__file__": "setup.py", "__name__": "__main__"})
"""


def test_one_line_without_wheel_support():
    run = subprocess.run([sys.executable, "-c", WITHOUT_WHEEL], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("extshuffle: ") and "/usr/bin/python3 -m pip install --no-build-isolation" in lines[0]
