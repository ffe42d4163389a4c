# Included by kernels/ and workloads/ (directory scope; include it from each directory that builds CUDA).
#
# 1. CMake 3.25 knows no C++20 flag for nvcc (its NVIDIA-CUDA module stops at CUDA17), so a target
#    with CUDA_STANDARD 20 + CUDA_STANDARD_REQUIRED (the top level's CMAKE_CUDA_STANDARD 20) fails at
#    generate time. nvcc >= 12 accepts -std=c++20, so teach this directory's CMake the flag when missing.
#
# 2. fuselens_cuda_options(TARGET): options for FuseLens's own CUDA sources (.cu), next to
#    fuselens_project_options (which covers only CXX sources):
#    - host-compiler warnings through nvcc (-Xcompiler=-Wall,-Wextra); errors with
#      FUSELENS_WARNINGS_AS_ERRORS;
#    - -lineinfo, so profilers can map SASS back to source lines (no effect on code generation);
#    - the shared CUDA runtime (libcudart.so) instead of CMake's default cudart_static, so executables
#      never carry two runtimes next to CUDA::cudart, and injection/CUPTI see one runtime.
include_guard(GLOBAL)

if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION
   AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA"
   AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()

function(fuselens_cuda_options target)
  set(cuda_flags -lineinfo -Xcompiler=-Wall,-Wextra)
  if(FUSELENS_WARNINGS_AS_ERRORS)
    list(APPEND cuda_flags -Werror=all-warnings -Xcompiler=-Werror)
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${cuda_flags}>)
  set_target_properties(${target} PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
endfunction()
