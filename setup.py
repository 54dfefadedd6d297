"""Builds the Python package extshuffle (docs/python.md) with CMake: the
library and the compiled module extshuffle._native, for the interpreter
running this script, in build-python-package/; the package's Python files
come from python/extshuffle. Offline, with Debian's setuptools and wheel:

    /usr/bin/python3 -m pip install --no-build-isolation --no-index .

pip shows a build's output only with -v; the steps (configure, then
compile k of n) are also written on the terminal, when there is one.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent
DEBIAN_COMMAND = "/usr/bin/python3 -m pip install --no-build-isolation --no-index ."


def has_wheel_support():
    """Whether setuptools can build a wheel here (its bdist_wheel command)."""
    try:
        import wheel  # noqa: F401  the command's home before setuptools 70.1
        return True
    except ImportError:
        try:
            from setuptools.command import bdist_wheel  # noqa: F401  setuptools >= 70.1
            return True
        except ImportError:
            return False


# pip builds a wheel (its metadata first): without wheel support setuptools
# can only say "invalid command 'bdist_wheel'"; say what to use instead.
if {"bdist_wheel", "dist_info", "editable_wheel"} & set(sys.argv[1:]) and not has_wheel_support():
    sys.exit(f"extshuffle: {sys.executable} has no 'wheel' package, so setuptools cannot build a wheel with it: "
             f"install with Debian's Python ({DEBIAN_COMMAND}), or install 'wheel' for this one first")

from setuptools import Extension, setup  # noqa: E402
from setuptools.command.build_ext import build_ext  # noqa: E402


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(extshuffle VERSION ([0-9.]+)", text).group(1)


class Progress:
    """Steps of the build on the terminal (pip captures this process's
    output and shows it only with -v), every line in the output too."""

    def __init__(self):
        try:
            self.tty = open("/dev/tty", "w") if not sys.stdout.isatty() else None
        except OSError:
            self.tty = None
        self.start = time.monotonic()

    def say(self, line, final=True):
        stamp = f"extshuffle [{time.monotonic() - self.start:4.0f} s] {line}"
        if self.tty is not None:
            self.tty.write(f"\r\033[K{stamp}" + ("\n" if final else ""))
            self.tty.flush()

    def run(self, command, what):
        """Runs `command`, its lines to stdout, its [k/n] steps to the terminal."""
        self.say(what)
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in process.stdout:
            sys.stdout.write(line)
            step = re.match(r"\[(\d+)/(\d+)\]|\[\s*(\d+)%\]", line)
            if step and step.group(1):
                self.say(f"{what}: step {step.group(1)} of {step.group(2)}", final=False)
            elif step:
                self.say(f"{what}: {step.group(3)}%", final=False)
        if process.wait() != 0:
            self.say(f"{what}: failed (pip install -v shows why)")
            raise subprocess.CalledProcessError(process.returncode, command)
        self.say(f"{what}: done")


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """The module built by the project's CMake, tests, benchmarks, MPI and CUDA off."""

    def build_extension(self, ext):
        build_dir = ROOT / "build-python-package"
        progress = Progress()
        generator = ["-G", "Ninja"] if shutil.which("ninja") and not (build_dir / "Makefile").exists() else []
        launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
        progress.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), *generator, *launcher,
                      "-DCMAKE_BUILD_TYPE=Release", f"-DPython3_EXECUTABLE={sys.executable}",
                      "-DEXTSHUFFLE_PYTHON=ON", "-DEXTSHUFFLE_BUILD_TESTS=OFF", "-DEXTSHUFFLE_BUILD_BENCH=OFF",
                      "-DEXTSHUFFLE_MPI=OFF", "-DEXTSHUFFLE_CUDA=OFF"], "configuring with CMake")
        progress.run(["cmake", "--build", str(build_dir), "--target", "extshuffle_native",
                      "-j", str(os.cpu_count() or 1)],
                     f"compiling the library and the module on {os.cpu_count() or 1} cores (2-3 minutes on 2)")
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
