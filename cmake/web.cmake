# The web front end (web/, built with npm into one JS + one CSS file and compiled into the binary)
# and `mlprof serve` (src/serve/, libmicrohttpd). Included from CMakeLists.txt.
#
# Where the bundle comes from:
#  - npm found (and MLPROF_WEB_FROM_SOURCE, the default): `npm ci` + esbuild in
#    <build>/web from web/'s sources and lockfile, so each build dir has its own node_modules
#    (parallel builds never race) and the browser tests find playwright-core there;
#  - no npm: the prebuilt bundle committed under web/dist-committed/ (refreshed with
#    `cp <build>/web/dist/mlprof.{js,css} web/dist-committed/` after a web change), so a machine
#    without node still builds a working binary.
find_package(ZLIB REQUIRED)
pkg_check_modules(MICROHTTPD REQUIRED IMPORTED_TARGET libmicrohttpd)
find_program(MLPROF_NPM npm)
option(MLPROF_WEB_FROM_SOURCE "Build the front end from web/ with npm (else web/dist-committed/)" ON)

set(MLPROF_WEB_DIR ${CMAKE_CURRENT_SOURCE_DIR}/web)
set(MLPROF_WEB_BUILD_DIR ${CMAKE_BINARY_DIR}/web)
if(MLPROF_WEB_FROM_SOURCE AND MLPROF_NPM)
  message(STATUS "mlprof web: building the front end from web/ with ${MLPROF_NPM}")
  file(GLOB mlprof_web_sources CONFIGURE_DEPENDS ${MLPROF_WEB_DIR}/src/*)
  add_custom_command(
    OUTPUT ${MLPROF_WEB_BUILD_DIR}/npm-ci.stamp
    COMMAND ${CMAKE_COMMAND} -E make_directory ${MLPROF_WEB_BUILD_DIR}
    COMMAND ${CMAKE_COMMAND} -E copy ${MLPROF_WEB_DIR}/package.json ${MLPROF_WEB_DIR}/package-lock.json
            ${MLPROF_WEB_BUILD_DIR}/
    COMMAND ${MLPROF_NPM} ci --no-audit --no-fund --loglevel=error
    COMMAND ${CMAKE_COMMAND} -E touch ${MLPROF_WEB_BUILD_DIR}/npm-ci.stamp
    DEPENDS ${MLPROF_WEB_DIR}/package.json ${MLPROF_WEB_DIR}/package-lock.json
    WORKING_DIRECTORY ${MLPROF_WEB_BUILD_DIR}
    COMMENT "web: npm ci (needs the npm registry once per build dir)"
    VERBATIM)
  add_custom_command(
    OUTPUT ${MLPROF_WEB_BUILD_DIR}/dist/mlprof.js ${MLPROF_WEB_BUILD_DIR}/dist/mlprof.css
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${MLPROF_WEB_BUILD_DIR}/src
    COMMAND ${CMAKE_COMMAND} -E copy_directory ${MLPROF_WEB_DIR}/src ${MLPROF_WEB_BUILD_DIR}/src
    COMMAND ${MLPROF_NPM} run --silent build
    DEPENDS ${MLPROF_WEB_BUILD_DIR}/npm-ci.stamp ${mlprof_web_sources}
    WORKING_DIRECTORY ${MLPROF_WEB_BUILD_DIR}
    COMMENT "web: esbuild bundle"
    VERBATIM)
  set(MLPROF_WEB_JS ${MLPROF_WEB_BUILD_DIR}/dist/mlprof.js)
  set(MLPROF_WEB_CSS ${MLPROF_WEB_BUILD_DIR}/dist/mlprof.css)
else()
  message(STATUS "mlprof web: npm not found (or MLPROF_WEB_FROM_SOURCE=OFF): using the prebuilt "
                 "bundle in web/dist-committed/")
  set(MLPROF_WEB_JS ${MLPROF_WEB_DIR}/dist-committed/mlprof.js)
  set(MLPROF_WEB_CSS ${MLPROF_WEB_DIR}/dist-committed/mlprof.css)
endif()

add_custom_command(
  OUTPUT ${MLPROF_WEB_BUILD_DIR}/web_bundle.cpp
  COMMAND ${CMAKE_COMMAND} -DJS=${MLPROF_WEB_JS} -DCSS=${MLPROF_WEB_CSS}
          -DOUT=${MLPROF_WEB_BUILD_DIR}/web_bundle.cpp -P ${CMAKE_CURRENT_LIST_DIR}/embed_web_bundle.cmake
  DEPENDS ${MLPROF_WEB_JS} ${MLPROF_WEB_CSS} ${CMAKE_CURRENT_LIST_DIR}/embed_web_bundle.cmake
  COMMENT "web: embedding the bundle"
  VERBATIM)
add_library(mlprof_web_assets STATIC ${MLPROF_WEB_BUILD_DIR}/web_bundle.cpp)
mlprof_stage_root(mlprof_web_assets PRIVATE render)  # defines render/web_page.h's bundle
target_link_libraries(mlprof_render PRIVATE mlprof_web_assets ZLIB::ZLIB)

# `mlprof serve`: the dashboard and REST API.
mlprof_stage(mlprof_serve serve)
target_link_libraries(mlprof_serve PUBLIC mlprof_analyze PRIVATE mlprof_render mlprof_import
                      PkgConfig::MICROHTTPD Threads::Threads)
target_link_libraries(mlprof PRIVATE mlprof_serve)

# `mlprof mcp`: a Model Context Protocol server on stdio over the traces named on its command
# line; serve's trace store (containment, caching) and the SQL stage.
mlprof_stage(mlprof_mcp mcp)
target_link_libraries(mlprof_mcp PUBLIC mlprof_serve PRIVATE mlprof_analyze mlprof_render
                      mlprof_import mlprof_sql simdjson::simdjson)
target_compile_definitions(mlprof_mcp PRIVATE MLPROF_VERSION="${PROJECT_VERSION}")
target_link_libraries(mlprof PRIVATE mlprof_mcp)
