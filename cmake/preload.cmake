# `mlprof run` capture: the LD_PRELOAD malloc tracker and the CUPTI injection library (sources:
# src/record/), the readers that turn their raw files into a Trace (src/import/capture/, linked
# into mlprof), and the examples it is tested with.
# Included from the top-level CMakeLists.txt after the mlprof target.

find_library(MLPROF_UNWIND_LIB NAMES unwind)
find_library(MLPROF_DW_LIB NAMES dw)
find_library(MLPROF_ELF_LIB NAMES elf)

# The preloaded tracker: no exceptions, no RTTI, initial-exec TLS (it is loaded at start-up).
add_library(mlprof_preload SHARED ${CMAKE_CURRENT_SOURCE_DIR}/src/record/preload/malloc_hooks.cpp)
mlprof_stage_root(mlprof_preload PRIVATE trace)  # the raw file layout only; links no stage
mlprof_stage_root(mlprof_preload PRIVATE record)  # record/capture_fd.h (header-only)
target_compile_options(mlprof_preload PRIVATE -O2 -fno-exceptions -fno-rtti -ftls-model=initial-exec
                       -fvisibility=hidden)
target_link_libraries(mlprof_preload PRIVATE ${MLPROF_UNWIND_LIB} ${CMAKE_DL_LIBS})
# Sanitizer presets must not reach what runs inside the profiled process: an ASan runtime
# would have to be preloaded first, and the tracker replaces malloc itself.
set(mlprof_no_sanitize -fno-sanitize=all)
target_compile_options(mlprof_preload PRIVATE ${mlprof_no_sanitize})
target_link_options(mlprof_preload PRIVATE ${mlprof_no_sanitize})
set_target_properties(mlprof_preload PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# Reading the raw files and symbolizing (libdw): the import stage's part that runs in mlprof after
# the child, a library of its own so that only mlprof links libdw.
file(GLOB mlprof_capture_srcs CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_SOURCE_DIR}/src/import/capture/*.cpp)
add_library(mlprof_capture STATIC ${mlprof_capture_srcs})
mlprof_stage_root(mlprof_capture PUBLIC import)
target_link_libraries(mlprof_capture PUBLIC mlprof_trace PRIVATE ${MLPROF_DW_LIB} ${MLPROF_ELF_LIB}
                      ${CMAKE_DL_LIBS})
target_link_libraries(mlprof PRIVATE mlprof_capture)
add_dependencies(mlprof mlprof_preload)

# CUPTI activity tracer, loaded by the CUDA driver through CUDA_INJECTION64_PATH.
set(MLPROF_CUDA_ROOT /usr/local/cuda)
if(MLPROF_WITH_CUDA AND EXISTS ${MLPROF_CUDA_ROOT}/include/cupti.h)
  find_library(MLPROF_CUPTI_LIB NAMES cupti
               PATHS ${MLPROF_CUDA_ROOT}/extras/CUPTI/lib64 ${MLPROF_CUDA_ROOT}/lib64 NO_DEFAULT_PATH)
  if(MLPROF_CUPTI_LIB)
    add_library(mlprof_cupti SHARED ${CMAKE_CURRENT_SOURCE_DIR}/src/record/cupti/cupti_injection.cpp)
    mlprof_stage_root(mlprof_cupti PRIVATE trace)  # the raw file layout only
    mlprof_stage_root(mlprof_cupti PRIVATE record)  # record/capture_fd.h (header-only)
    target_include_directories(mlprof_cupti PRIVATE ${MLPROF_CUDA_ROOT}/include)
    target_link_libraries(mlprof_cupti PRIVATE ${MLPROF_CUPTI_LIB} Threads::Threads)
    target_compile_options(mlprof_cupti PRIVATE ${mlprof_no_sanitize})
    target_link_options(mlprof_cupti PRIVATE ${mlprof_no_sanitize})
    get_filename_component(mlprof_cupti_dir ${MLPROF_CUPTI_LIB} DIRECTORY)
    set_target_properties(mlprof_cupti PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
                          BUILD_RPATH ${mlprof_cupti_dir})
    add_dependencies(mlprof mlprof_cupti)
    message(STATUS "mlprof: CUPTI injection library enabled (${MLPROF_CUPTI_LIB})")
  endif()
endif()

# Examples `mlprof run` is tested with.
add_executable(alloc_test ${CMAKE_CURRENT_SOURCE_DIR}/examples/alloc_test/alloc_test.cpp)
target_compile_options(alloc_test PRIVATE -O1 -g -fno-omit-frame-pointer -fno-inline-functions)
target_link_libraries(alloc_test PRIVATE Threads::Threads)
target_compile_options(alloc_test PRIVATE ${mlprof_no_sanitize})
target_link_options(alloc_test PRIVATE ${mlprof_no_sanitize})
set_target_properties(alloc_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/examples)

if(MLPROF_WITH_CUDA AND EXISTS ${MLPROF_CUDA_ROOT}/bin/nvcc)
  set(mlprof_cuda_example ${CMAKE_BINARY_DIR}/examples/cuda_vector_add)
  add_custom_command(
    OUTPUT ${mlprof_cuda_example}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/examples
    COMMAND ${MLPROF_CUDA_ROOT}/bin/nvcc -O2 -g -lineinfo -gencode arch=compute_80,code=[sm_80,compute_80]
            -gencode arch=compute_90,code=sm_90 -o ${mlprof_cuda_example}
            ${CMAKE_CURRENT_SOURCE_DIR}/examples/cuda/vector_add.cu
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/examples/cuda/vector_add.cu
    COMMENT "nvcc examples/cuda/vector_add.cu")
  add_custom_target(cuda_example DEPENDS ${mlprof_cuda_example})
endif()
