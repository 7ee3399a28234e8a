#!/usr/bin/env bash
# Builds mlprof and its capture libraries with CUDA support here and packs them, with every shared
# library they need beyond glibc, into one folder that runs on another x86-64 Linux machine
# (the GPU check, scripts/gpu_check.sh --bundle). The binaries carry RPATH $ORIGIN/lib (DT_RPATH,
# not RUNPATH: it also applies to the libraries' own dependencies, libdw -> libelf).
# libstdc++/libgcc_s go to lib-fallback/: a newer system copy must win in the profiled program
# (PyTorch needs a newer libstdc++ than Debian 12's), so gpu_check.sh adds them only if missing.
# Usage: scripts/gpu_bundle.sh [--from-build BUILD] [BUNDLE_DIR=.gpubundle] [BUILD_DIR=build-gpu]
# --from-build BUILD: pack an existing build (e.g. build/, the default preset with CUDA) instead of
# configuring build-gpu, setting RPATH with patchelf (a separate build took 40+ minutes on two
# cores shared with other builds: its include paths differ, so ccache misses).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
from=""
if [[ ${1:-} == --from-build ]]; then from=$(cd "$2" && pwd); shift 2; fi
bundle=${1:-$root/.gpubundle}
build=${from:-${2:-$root/build-gpu}}
mkdir -p "$build"
if [[ -n $from ]]; then
  command -v patchelf > /dev/null || { echo "gpu_bundle: --from-build needs patchelf"; exit 1; }
  cmake --build "$build" --target mlprof mlprof_preload mlprof_cupti | tail -1
  [[ -f $build/libmlprof_cupti.so ]] || { echo "gpu_bundle: $build has no libmlprof_cupti.so (CUPTI)"; exit 1; }
else
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLPROF_BUILD_TESTS=OFF \
  -DMLPROF_BUILD_BENCH=OFF -DMLPROF_WITH_CUDA=ON -DMLPROF_WITH_MPI=OFF \
  '-DCMAKE_BUILD_RPATH=$ORIGIN/lib' -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags \
  -DCMAKE_SHARED_LINKER_FLAGS=-Wl,--disable-new-dtags > "$build/configure.log" 2>&1 ||
  { tail -30 "$build/configure.log"; exit 1; }
grep -q "CUPTI injection library enabled" "$build/configure.log" ||
  { echo "gpu_bundle: CUPTI not found (is the CUDA toolkit at /usr/local/cuda?)"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target mlprof mlprof_preload mlprof_cupti | tail -1
fi
rm -rf "$bundle"
mkdir -p "$bundle/lib" "$bundle/lib-fallback"
for f in mlprof libmlprof_preload.so libmlprof_cupti.so; do
  objcopy --strip-debug "$build/$f" "$bundle/$f"
  # DT_RPATH (not RUNPATH): it also applies to the libraries' own dependencies.
  [[ -n $from ]] && patchelf --force-rpath --set-rpath '$ORIGIN/lib' "$bundle/$f"
done
# Every resolved dependency except glibc's own libraries and the loader.
ldd "$build/mlprof" "$build/libmlprof_preload.so" "$build/libmlprof_cupti.so" |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
    case $name in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libutil.so.*|ld-linux*) ;;
      libstdc++.so.*|libgcc_s.so.*) cp -L "$path" "$bundle/lib-fallback/$name" ;;
      *) cp -L "$path" "$bundle/lib/$name" ;;
    esac
  done
# Packed libraries find their own dependencies beside them (libmpi's RUNPATH pointed at the
# system's Open MPI libraries, which the GPU machine lacks).
if [[ -n $from ]]; then
  for f in "$bundle"/lib/*; do patchelf --force-rpath --set-rpath '$ORIGIN' "$f" 2>/dev/null || true; done
fi
# The check must not depend on anything else here: run it with an empty environment.
for f in mlprof libmlprof_preload.so libmlprof_cupti.so; do
  if env -i LD_LIBRARY_PATH="$bundle/lib-fallback" ldd "$bundle/$f" | grep -q "not found"; then
    echo "gpu_bundle: $f misses a library:"; env -i ldd "$bundle/$f" | grep "not found"; exit 1
  fi
done
# ...and every library the loader maps must come from the bundle, glibc or libstdc++/libgcc_s.
stray=$(env -i LD_DEBUG=libs "$bundle/mlprof" --version 2>&1 | sed -n 's/.*calling init: //p' |
  grep -v "^$bundle/" | grep -vE '/(libc|libm|libpthread|libdl|librt|libutil|libstdc\+\+|libgcc_s)\.so|ld-linux' || true)
[[ -z $stray ]] || { echo "gpu_bundle: loaded from outside the bundle:"; echo "$stray"; exit 1; }
env -i "$bundle/mlprof" --version
du -sh "$bundle"
