# Finds NVIDIA CUTLASS's headers (with CuTe) for kernels/cutlass_gemm and decides whether that
# folder is built. Included by kernels/CMakeLists.txt.
#
#   FUSELENS_CUTLASS          option (ON): build the CUTLASS variants when possible.
#   FUSELENS_CUTLASS_DIR      cache path: the include directory holding cutlass/cutlass.h and
#                             cute/tensor.hpp. Empty: asked from the `nvidia-cutlass` wheel that
#                             scripts/setup.sh installs (python3: <site-packages>/cutlass_library/
#                             source/include).
#   FUSELENS_CUTLASS_ENABLED  result (ON/OFF): headers found, version >= 4.2 (CUDA 13 support), and
#                             CMAKE_CUDA_ARCHITECTURES lists 90 (90, 90a, 90-real, all, ...). Each
#                             reason for OFF is printed in one line.
# The CUTLASS translation units are compiled for sm_90a alone (wgmma and TMA need the
# arch-specific target), whatever else CMAKE_CUDA_ARCHITECTURES lists.
include_guard(GLOBAL)

option(FUSELENS_CUTLASS "Build the CUTLASS sm90 variants of the GEMM-epilogue ops (kernels/cutlass_gemm)" ON)
set(FUSELENS_CUTLASS_DIR "" CACHE PATH
    "CUTLASS include directory (cutlass/cutlass.h, cute/); empty: from python3's nvidia-cutlass wheel")
set(FUSELENS_CUTLASS_MIN_VERSION 4.2.0)
set(FUSELENS_CUTLASS_ENABLED OFF)

function(_fuselens_cutlass_probe)
  if(NOT FUSELENS_CUTLASS)
    message(STATUS "FuseLens: CUTLASS variants off (FUSELENS_CUTLASS=OFF)")
    return()
  endif()
  set(arch_ok OFF)
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(arch MATCHES "^90a?(-real|-virtual)?$" OR arch MATCHES "^all(-major)?$")
      set(arch_ok ON)
    endif()
  endforeach()
  if(NOT arch_ok)
    message(STATUS "FuseLens: CUTLASS variants skipped: CMAKE_CUDA_ARCHITECTURES "
                   "(${CMAKE_CUDA_ARCHITECTURES}) does not list 90 (the kernels are sm_90a code)")
    return()
  endif()

  set(dir "${FUSELENS_CUTLASS_DIR}")
  if(dir STREQUAL "")
    # The `python3` first on PATH: the interpreter whose pip scripts/setup.sh ran.
    find_program(FUSELENS_PYTHON3 python3)
    if(FUSELENS_PYTHON3)
      execute_process(
        COMMAND "${FUSELENS_PYTHON3}" -c
          "import importlib.util as u, os; s = u.find_spec('cutlass_library'); print(os.path.join(s.submodule_search_locations[0], 'source', 'include') if s else '')"
        OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
  endif()
  if(dir STREQUAL "" OR NOT EXISTS "${dir}/cutlass/version.h" OR NOT EXISTS "${dir}/cute/tensor.hpp")
    message(STATUS "FuseLens: CUTLASS variants skipped: no CUTLASS headers found (install the "
                   "nvidia-cutlass wheel with scripts/setup.sh, or set -DFUSELENS_CUTLASS_DIR=<dir "
                   "with cutlass/version.h and cute/>; -DFUSELENS_CUTLASS=OFF silences this)")
    return()
  endif()

  file(STRINGS "${dir}/cutlass/version.h" lines REGEX "#define CUTLASS_(MAJOR|MINOR|PATCH) [0-9]+")
  set(version "")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX MATCH "CUTLASS_${part} ([0-9]+)" _ "${lines}")
    list(APPEND version "${CMAKE_MATCH_1}")
  endforeach()
  list(JOIN version "." version)
  if(version VERSION_LESS FUSELENS_CUTLASS_MIN_VERSION)
    message(STATUS "FuseLens: CUTLASS variants skipped: CUTLASS ${version} at ${dir} is older than "
                   "${FUSELENS_CUTLASS_MIN_VERSION} (the first release for CUDA 13.0)")
    return()
  endif()
  message(STATUS "FuseLens: CUTLASS ${version} (${dir}): sm_90a variants in kernels/cutlass_gemm")
  set(FUSELENS_CUTLASS_ENABLED ON PARENT_SCOPE)
  set(FUSELENS_CUTLASS_INCLUDE_DIR "${dir}" PARENT_SCOPE)
endfunction()

if(CMAKE_CUDA_COMPILER)
  _fuselens_cutlass_probe()
endif()
