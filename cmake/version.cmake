# `mlprof --version`: the project version (project() in CMakeLists.txt) and the commit the binary
# was built from, written into a generated source at every build (cmake/write_version.cmake; a
# tree without .git says "commit unknown"). Included after the mlprof target.
set(MLPROF_VERSION_CPP ${CMAKE_BINARY_DIR}/generated/version.cpp)
add_custom_target(mlprof_version_info
  COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DOUT=${MLPROF_VERSION_CPP}
          -DVERSION=${PROJECT_VERSION} -P ${CMAKE_CURRENT_LIST_DIR}/write_version.cmake
  BYPRODUCTS ${MLPROF_VERSION_CPP}
  COMMENT "mlprof --version: commit"
  VERBATIM)
target_sources(mlprof PRIVATE ${MLPROF_VERSION_CPP})
add_dependencies(mlprof mlprof_version_info)
