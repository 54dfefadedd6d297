"""Builds the Python package extshuffle (docs/python.md) with CMake: the
library and the compiled module extshuffle._native, for the interpreter
running this script, in build-python-package/; the package's Python files
come from python/extshuffle. Offline, with Debian's setuptools and wheel:

    /usr/bin/python3 -m pip install --no-build-isolation --no-index .
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(extshuffle VERSION ([0-9.]+)", text).group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """The module built by the project's CMake, tests, benchmarks, MPI and CUDA off."""

    def build_extension(self, ext):
        build_dir = ROOT / "build-python-package"
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                        f"-DPython3_EXECUTABLE={sys.executable}", "-DEXTSHUFFLE_PYTHON=ON",
                        "-DEXTSHUFFLE_BUILD_TESTS=OFF", "-DEXTSHUFFLE_BUILD_BENCH=OFF", "-DEXTSHUFFLE_MPI=OFF",
                        "-DEXTSHUFFLE_CUDA=OFF"], check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "extshuffle_native",
                        "-j", str(os.cpu_count() or 1)], check=True)
        built = next((build_dir / "python" / "extshuffle").glob("_native*.so"))
        destination = pathlib.Path(self.get_ext_fullpath(ext.name))
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, destination)


setup(
    name="extshuffle",
    version=project_version(),
    description="Reproducible uniform shuffles of datasets larger than memory: the permutation as an "
                "addressable index, a DistributedSampler, and the extshuffle tool's run",
    packages=["extshuffle"],
    package_dir={"": "python"},
    ext_modules=[CMakeExtension("extshuffle._native")],
    cmdclass={"build_ext": CMakeBuild},
    install_requires=["numpy"],
    python_requires=">=3.9",
    zip_safe=False,
)
