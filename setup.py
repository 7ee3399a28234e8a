"""Builds mlprof's Python package with CMake: the extension mlprof._core, python/mlprof, and the
mlprof binary with the capture libraries `mlprof run` injects (mlprof/_bin/, run by the `mlprof`
command and `python -m mlprof`).

    pip install --no-build-isolation .     # offline: uses the installed pybind11 and setuptools
    MLPROF_BUILD_DIR=build pip install --no-build-isolation .   # reuse a configured build dir

The extension is built for the interpreter running pip (-DPython3_EXECUTABLE=sys.executable); a
reused build dir must have been configured for the same Python version (it is checked).
MLPROF_CMAKE_ARGS adds CMake arguments (a fresh build dir only), e.g. -DMLPROF_MARCH=x86-64-v2
for a wheel that runs on other machines; MLPROF_BUILD_JOBS sets the parallelism (default 2).
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
# What the wheel carries besides the extension: mlprof/_bin/<name>.
BUNDLED = ["mlprof", "libmlprof_preload.so", "libmlprof_cupti.so"]


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


def configure(build_dir):
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


def copy_stripped(src, dst):
    """Copies without debug info (a RelWithDebInfo binary is ~5x smaller); a plain copy when
    objcopy is missing."""
    if not shutil.which("objcopy") or subprocess.run(
            ["objcopy", "--strip-debug", src, dst]).returncode != 0:
        shutil.copyfile(src, dst)
    shutil.copymode(src, dst)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        reuse = os.environ.get("MLPROF_BUILD_DIR", "")
        if reuse:
            build_dir = os.path.abspath(reuse)
            if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
                configure(build_dir)
        else:
            build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
            configure(build_dir)
        jobs = os.environ.get("MLPROF_BUILD_JOBS", "2")
        # MLPROF_SKIP_BUILD=1 (with MLPROF_BUILD_DIR): take what is built as it is (ctest
        # pip_venv, which must not relink a binary other tests are running).
        # The binary installs ship: build/installed/mlprof (without MPI) when build/mlprof links
        # MPI (cmake/install.cmake), so the wheel does not need OpenMPI's libraries.
        targets_file = os.path.join(build_dir, "CMakeFiles", "TargetDirectories.txt")
        installed = (os.path.exists(targets_file)
                     and "/mlprof_installed.dir" in open(targets_file).read())
        if not (reuse and os.environ.get("MLPROF_SKIP_BUILD") == "1"):
            subprocess.run(["cmake", "--build", build_dir, "--target", "mlprof_python_ext",
                            "mlprof_installed" if installed else "mlprof", "-j", jobs],
                           check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(build_dir, "python", "mlprof", "_core" + suffix)
        if not os.path.exists(built):
            found = glob.glob(os.path.join(build_dir, "python", "mlprof", "_core*.so"))
            raise RuntimeError(f"{build_dir} has no mlprof/_core{suffix} for {sys.executable}"
                               + (f" (it has {', '.join(map(os.path.basename, found))}: configured "
                                  "for another Python)" if found else " (is pybind11 installed?)"))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        copy_stripped(built, target)
        bin_dir = os.path.join(os.path.dirname(target), "_bin")
        os.makedirs(bin_dir, exist_ok=True)
        for name in BUNDLED:
            src = os.path.join(build_dir, "installed" if installed and name == "mlprof" else "",
                               name)
            if not os.path.exists(src):
                if name == "libmlprof_cupti.so":
                    continue  # built only against a CUDA toolkit
                raise RuntimeError(f"CMake did not produce {src}")
            copy_stripped(src, os.path.join(bin_dir, name))


setup(
    packages=["mlprof"],
    package_dir={"mlprof": "python/mlprof"},
    package_data={"mlprof": ["*.pyi", "py.typed"]},  # the type stub (PEP 561)
    ext_modules=[CMakeExtension("mlprof._core")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build/pip"}},
    zip_safe=False,
)
