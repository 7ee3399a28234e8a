#!/usr/bin/env bash
# web/dist-committed/ (the bundle a machine without npm compiles in) must equal a fresh esbuild of
# web/src: the build's <build>/web/dist/. Skips (77) when the build had no npm/esbuild.
# Usage: committed_bundle.sh BUILD_WEB_DIST REPO_WEB_DIST_COMMITTED
built=$1 committed=$2
if [ ! -f "$built/mlprof.js" ] || [ ! -f "$built/mlprof.css" ]; then
  echo "SKIP: no esbuild output in $built (npm/esbuild absent: the build used web/dist-committed/)"
  exit 77
fi
status=0
for f in mlprof.js mlprof.css; do
  if cmp -s "$built/$f" "$committed/$f"; then
    echo "ok: web/dist-committed/$f equals the build of web/src ($(wc -c < "$built/$f") bytes)"
  else
    echo "FAIL: web/dist-committed/$f differs from a build of web/src ($built/$f);" \
         "refresh it: cp $built/mlprof.{js,css} web/dist-committed/"
    status=1
  fi
done
exit $status
