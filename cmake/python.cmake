# The Python module (`import mlprof`): the pybind11 extension mlprof._core (python/src) and the
# pure-Python package (python/mlprof), assembled in <build>/python so that
# `PYTHONPATH=build/python python3 -c 'import mlprof'` works right after the build.
#
# Which interpreter: the one the user's torch lives in. On Debian that is /usr/bin/python3 (its
# numpy, pandas, torch and pybind11 packages), while `python3` first on PATH may be another
# interpreter without them. Unless -DPython3_EXECUTABLE=... is given, the first candidate that
# imports pybind11 wins, preferring one that also imports torch.
option(MLPROF_BUILD_PYTHON "Build the Python module (needs pybind11 and Python headers)" ON)
if(NOT MLPROF_BUILD_PYTHON)
  return()
endif()

if(NOT Python3_EXECUTABLE)
  set(mlprof_py_candidates /usr/bin/python3)
  find_program(mlprof_path_python3 NAMES python3 NO_CACHE)
  if(mlprof_path_python3)
    list(APPEND mlprof_py_candidates ${mlprof_path_python3})
  endif()
  set(mlprof_py_fallback "")
  foreach(candidate ${mlprof_py_candidates})
    if(NOT EXISTS ${candidate})
      continue()
    endif()
    execute_process(COMMAND ${candidate} -c "import pybind11" RESULT_VARIABLE has_pybind11
                    OUTPUT_QUIET ERROR_QUIET)
    if(NOT has_pybind11 EQUAL 0)
      continue()
    endif()
    execute_process(COMMAND ${candidate} -c "import torch" RESULT_VARIABLE has_torch
                    OUTPUT_QUIET ERROR_QUIET)
    if(has_torch EQUAL 0)
      set(Python3_EXECUTABLE ${candidate} CACHE FILEPATH "Python interpreter for mlprof's module")
      break()
    elseif(NOT mlprof_py_fallback)
      set(mlprof_py_fallback ${candidate})
    endif()
  endforeach()
  if(NOT Python3_EXECUTABLE AND mlprof_py_fallback)
    set(Python3_EXECUTABLE ${mlprof_py_fallback} CACHE FILEPATH
        "Python interpreter for mlprof's module")
  endif()
endif()

find_package(Python3 COMPONENTS Interpreter Development.Module)
if(NOT Python3_FOUND)
  message(STATUS "mlprof python: no Python 3 with headers found; the Python module is not built")
  return()
endif()
execute_process(COMMAND ${Python3_EXECUTABLE} -c "import pybind11; print(pybind11.get_cmake_dir())"
                OUTPUT_VARIABLE mlprof_pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
find_package(pybind11 CONFIG QUIET HINTS ${mlprof_pybind11_dir})
if(NOT pybind11_FOUND)
  message(STATUS "mlprof python: pybind11 not found for ${Python3_EXECUTABLE}; not built "
                 "(Debian: apt-get install pybind11-dev python3-pybind11)")
  return()
endif()
message(STATUS "mlprof python: building the module for ${Python3_EXECUTABLE} "
               "(${Python3_VERSION})")

set(MLPROF_PYTHON_DIR ${CMAKE_BINARY_DIR}/python)
file(GLOB mlprof_py_ext_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/src/*.cpp)
pybind11_add_module(mlprof_python_ext MODULE ${mlprof_py_ext_srcs})
target_include_directories(mlprof_python_ext PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/python/src)
target_link_libraries(mlprof_python_ext PRIVATE mlprof_import mlprof_export mlprof_analyze
                      mlprof_render mlprof_record)
set_target_properties(mlprof_python_ext PROPERTIES
  OUTPUT_NAME _core
  LIBRARY_OUTPUT_DIRECTORY ${MLPROF_PYTHON_DIR}/mlprof)

# The pure-Python files, the type stub and its PEP 561 marker, copied next to the extension.
file(GLOB mlprof_py_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/mlprof/*.py
     ${CMAKE_CURRENT_SOURCE_DIR}/python/mlprof/*.pyi ${CMAKE_CURRENT_SOURCE_DIR}/python/mlprof/py.typed)
set(mlprof_py_outputs "")
foreach(src ${mlprof_py_sources})
  get_filename_component(name ${src} NAME)
  add_custom_command(OUTPUT ${MLPROF_PYTHON_DIR}/mlprof/${name}
                     COMMAND ${CMAKE_COMMAND} -E copy_if_different ${src}
                             ${MLPROF_PYTHON_DIR}/mlprof/${name}
                     DEPENDS ${src} VERBATIM)
  list(APPEND mlprof_py_outputs ${MLPROF_PYTHON_DIR}/mlprof/${name})
endforeach()
add_custom_target(mlprof_python ALL DEPENDS ${mlprof_py_outputs} mlprof_python_ext)
