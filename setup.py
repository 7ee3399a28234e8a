"""Builds mlprof's Python module with CMake (the extension mlprof._core) and packages python/mlprof.

    pip install --no-build-isolation .     # offline: uses the installed pybind11 and setuptools

The extension is built for the interpreter running pip (-DPython3_EXECUTABLE=sys.executable).
MLPROF_CMAKE_ARGS adds CMake arguments; MLPROF_BUILD_JOBS sets the parallelism (default 2).
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        args = [
            "cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}", "-DMLPROF_BUILD_TESTS=OFF",
            "-DMLPROF_BUILD_BENCH=OFF",
        ]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        if shutil.which("ccache"):
            args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        args += shlex.split(os.environ.get("MLPROF_CMAKE_ARGS", ""))
        subprocess.run(args, check=True)
        jobs = os.environ.get("MLPROF_BUILD_JOBS", "2")
        subprocess.run(["cmake", "--build", build_dir, "--target", "mlprof_python_ext", "-j", jobs],
                       check=True)
        built = glob.glob(os.path.join(build_dir, "python", "mlprof", "_core*.so"))
        if not built:
            raise RuntimeError("CMake did not produce mlprof/_core*.so (is pybind11 installed?)")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    packages=["mlprof"],
    package_dir={"mlprof": "python/mlprof"},
    ext_modules=[CMakeExtension("mlprof._core")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build/pip"}},
    zip_safe=False,
)
