# `cmake --install build [--prefix DIR]` (docs/install.md). Two parts, also the two Debian
# packages CPack makes (cmake/package.cmake):
#  - runtime: bin/mlprof, the capture libraries `mlprof run` injects in lib/mlprof/ (cmd_run.cpp
#    looks next to the binary, then in <bin>/../lib/mlprof: an installed tree works wherever it
#    is copied), the man page and the bash/zsh completions (generated from the CLI's own help);
#  - dev: include/mlprof, the static libraries, find_package(mlprof) (mlprof::record,
#    mlprof::mlprof) and pkg-config files (mlprof-record, mlprof).
# Included from CMakeLists.txt after every target.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MLPROF_CAPTURE_LIBDIR lib/mlprof)  # fixed: cmd_run.cpp's find_library() looks there

# mlprof::mlprof: everything public (the stages a program loading and analyzing traces links).
add_library(mlprof_all INTERFACE)
target_link_libraries(mlprof_all INTERFACE mlprof_import mlprof_export mlprof_analyze mlprof_record)
set_target_properties(mlprof_all PROPERTIES EXPORT_NAME mlprof)
foreach(stage trace import export analyze record)
  set_target_properties(mlprof_${stage} PROPERTIES EXPORT_NAME ${stage})
endforeach()

# The installed mlprof (cmake --install, the .deb) does not link MPI: OpenMPI would add ~50
# packages to the .deb's Depends for `mpirun -np N mlprof ranks` alone (build/mlprof keeps it).
# When build/mlprof links MPI, mlprof_installed is its objects with src/cli/mpi_ranks.cpp
# compiled again without MPI: one compile and a link, not a second build (build/installed/mlprof).
if(MLPROF_MPI_LINKED)
  add_executable(mlprof_installed ${PROJECT_SOURCE_DIR}/src/cli/mpi_ranks.cpp
                 "$<FILTER:$<TARGET_OBJECTS:mlprof>,EXCLUDE,/mpi_ranks\\.cpp\\.o$>")
  mlprof_stage_root(mlprof_installed PRIVATE cli)
  target_link_libraries(mlprof_installed PRIVATE
                        "$<FILTER:$<TARGET_PROPERTY:mlprof,LINK_LIBRARIES>,EXCLUDE,^MPI::>")
  set_target_properties(mlprof_installed PROPERTIES OUTPUT_NAME mlprof
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/installed)
  set(mlprof_installed_bin mlprof_installed)
else()
  set(mlprof_installed_bin mlprof)
endif()
install(TARGETS ${mlprof_installed_bin} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
# Libraries outside the linker's default path (CUDA's CUPTI) stay found.
set_target_properties(${mlprof_installed_bin} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS mlprof_preload LIBRARY DESTINATION ${MLPROF_CAPTURE_LIBDIR} COMPONENT runtime)
if(TARGET mlprof_cupti)
  set_target_properties(mlprof_cupti PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS mlprof_cupti LIBRARY DESTINATION ${MLPROF_CAPTURE_LIBDIR} COMPONENT runtime)
endif()

install(TARGETS mlprof_trace mlprof_import mlprof_export mlprof_analyze mlprof_record mlprof_all
        EXPORT mlprofTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
# `cmake --install --strip` and CPack (CPACK_STRIP_FILES) strip executables and shared libraries
# only: the static libraries lose their debug info here (mlprof-dev: 42 MB -> a few MB).
set(mlprof_archives "")
foreach(stage trace import export analyze record)
  list(APPEND mlprof_archives "${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:mlprof_${stage}>")
endforeach()
if(CMAKE_STRIP)
  install(CODE "
    if(CMAKE_INSTALL_DO_STRIP)
      foreach(a ${mlprof_archives})
        set(f \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/\${a}\")
        if(EXISTS \"\${f}\")
          execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \"\${f}\")
        endif()
      endforeach()
    endif()" COMPONENT dev)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/mlprof DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT dev)
set(mlprof_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/mlprof)
install(EXPORT mlprofTargets NAMESPACE mlprof:: DESTINATION ${mlprof_cmake_dir} COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/mlprofConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/install/mlprofConfig.cmake
                              INSTALL_DESTINATION ${mlprof_cmake_dir})
# 0.x: a minor release may change the API.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/mlprofConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/mlprofConfig.cmake
              ${CMAKE_BINARY_DIR}/install/mlprofConfigVersion.cmake
        DESTINATION ${mlprof_cmake_dir} COMPONENT dev)

# pkg-config: the prefix relative to the .pc file, so that `--prefix` at install time holds.
set(mlprof_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH MLPROF_PC_TO_PREFIX /prefix/${mlprof_pc_dir} /prefix)
foreach(pc mlprof mlprof-record)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${CMAKE_BINARY_DIR}/install/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/install/${pc}.pc DESTINATION ${mlprof_pc_dir} COMPONENT dev)
endforeach()

# The man page and completions, from `mlprof --help` and `mlprof CMD --help` after each link.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND AND NOT CMAKE_CROSSCOMPILING)
  set(mlprof_cli_docs ${CMAKE_BINARY_DIR}/cli_docs)
  set(mlprof_cli_doc_files ${mlprof_cli_docs}/mlprof.1 ${mlprof_cli_docs}/mlprof.bash
                           ${mlprof_cli_docs}/_mlprof)
  add_custom_command(
    OUTPUT ${mlprof_cli_doc_files}
    COMMAND ${CMAKE_COMMAND} -E env MLPROF_NO_PROGRESS=1 ASAN_OPTIONS=detect_leaks=0 ${Python3_EXECUTABLE}
            ${CMAKE_CURRENT_LIST_DIR}/gen_cli_docs.py $<TARGET_FILE:mlprof> ${mlprof_cli_docs}
    DEPENDS mlprof ${CMAKE_CURRENT_LIST_DIR}/gen_cli_docs.py
    COMMENT "mlprof: man page and shell completions from --help"
    VERBATIM)
  add_custom_target(mlprof_cli_docs ALL DEPENDS ${mlprof_cli_doc_files})
  install(FILES ${mlprof_cli_docs}/mlprof.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          COMPONENT runtime)
  install(FILES ${mlprof_cli_docs}/mlprof.bash DESTINATION
          ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME mlprof COMPONENT runtime)
  # Debian's zsh reads vendor-completions; elsewhere (and under /usr/local) site-functions.
  # Decided at install time: the .deb is cpack'd from a build configured for /usr/local.
  install(CODE "
    set(mlprof_zsh_dir site-functions)
    if(CMAKE_INSTALL_PREFIX MATCHES \"^/usr/?$\")
      set(mlprof_zsh_dir vendor-completions)
    endif()
    file(INSTALL \"${mlprof_cli_docs}/_mlprof\"
         DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/zsh/\${mlprof_zsh_dir}\")"
    COMPONENT runtime)
else()
  message(STATUS "mlprof: no Python 3 interpreter: no man page or shell completions installed")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/package.cmake)
