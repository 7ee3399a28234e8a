# Sourced by the browser tests (web_*.sh, speedscope.sh): Debian's chromium, node, and the npm
# packages that `npm ci` of web/ put in the build directory. require_browser [PACKAGE_PATH...]
# sets NODE_MODULES (the node_modules holding playwright-core and each PACKAGE_PATH), or skips the
# test (exit 0, with the reason) when one is missing. Needs MLPROF (the built binary) set.
BROWSER_ENV_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "$(dirname "$MLPROF")" && pwd)
CHROMIUM=${MLPROF_CHROMIUM:-/usr/bin/chromium}

require_browser() {
  if [ ! -x "$CHROMIUM" ]; then echo "SKIP: $CHROMIUM not installed (make deps installs chromium)"; exit 0; fi
  if ! command -v node >/dev/null; then echo "SKIP: node not installed"; exit 0; fi
  local nm pkg ok
  for nm in "$BUILD/web/node_modules" "$BROWSER_ENV_HERE/../web/node_modules"; do
    ok=1
    for pkg in playwright-core "$@"; do [ -d "$nm/$pkg" ] || ok=; done
    if [ -n "$ok" ]; then NODE_MODULES=$nm; return; fi
  done
  echo "SKIP: playwright-core $* not in $BUILD/web/node_modules (npm ci of web/, run by building the mlprof target)"
  exit 0
}
