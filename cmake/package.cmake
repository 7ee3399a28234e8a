# `make package`: two Debian packages from the install components (cmake/install.cmake):
#   mlprof      bin/mlprof, lib/mlprof/ (capture libraries), man page, completions; its Depends
#               computed by dpkg-shlibdeps from what the binary and libraries link;
#   mlprof-dev  headers, static libraries, find_package(mlprof), pkg-config (Depends: the -dev
#               packages those static libraries need at link time).
# The Makefile builds them in build-package/ with a portable -march (MLPROF_MARCH=x86-64-v2),
# without MPI (OpenMPI would add ~50 packages to Depends) and stripped. Included from install.cmake.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME mlprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "mlprof")
set(CPACK_PACKAGE_CONTACT "mlprof maintainers <mlprof@example.invalid>")
# Each package's description: its component's, first line the summary (CPackDeb formats it).
set(CPACK_STRIP_FILES ON)
# Install with DESTDIR and the prefix /usr itself (not <staging>/usr), so that install-time
# choices by prefix (the zsh completion's directory, cmake/install.cmake) see /usr.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # mlprof_0.1.0_amd64.deb, mlprof-dev_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.invalid/mlprof")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME mlprof)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "Profiler and trace analyzer for ML workloads\nReads PyTorch profiler, Nsight Systems, rocprof, XLA and Perfetto traces and\nreports step time, GPU idle causes, top ops and kernels, memory peaks and leaks,\nranked recommendations and run-to-run regressions; mlprof run profiles any\nprogram's heap (and CUDA kernels).")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME mlprof-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "mlprof (= ${PROJECT_VERSION}), libsimdjson-dev, libfmt-dev, libisal-dev, libzstd-dev, libssl-dev, libsqlite3-dev, libprotobuf-dev, pkg-config")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "mlprof's C++ API: recorder and trace analysis\nHeaders, static libraries, a CMake package (find_package(mlprof):\nmlprof::record, mlprof::mlprof) and pkg-config files (mlprof-record, mlprof).")
# The CUPTI injection library links CUDA's libcupti, which no Debian package provides: let
# dpkg-shlibdeps find it (and warn instead of failing on its missing package information).
if(TARGET mlprof_cupti)
  get_filename_component(mlprof_cupti_libdir ${MLPROF_CUPTI_LIB} DIRECTORY)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${mlprof_cupti_libdir})
endif()
include(CPack)
