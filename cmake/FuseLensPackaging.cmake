# Packaging (docs/install.md): included last by the top-level CMakeLists.txt, once every target
# exists.
#   - the bundle for GPU hosts: one relocatable archive (CPack TGZ; `cmake --build <dir> --target
#     bundle`) with the collector, the exit shim, prof-run, prof-analyze, prof-ceilings, their man
#     pages, the shared libraries a host with a driver and no build tools lacks (in lib/; every
#     program and library finds them through its RPATH $ORIGIN/../lib), fuselens/annotate.h with
#     its CMake package, and one capture to try prof-analyze on;
#   - the viewer's Debian package (CPack DEB; `--target viewer_deb`): prof-analyze, prof-gui where
#     Qt was found, their man pages; Depends from dpkg-shlibdeps;
#   - the CMake package FuseLens (find_package(FuseLens CONFIG) gives fuselens::annotate).
# Install components: analysis (prof-analyze, peaks.json), gui (prof-gui), collector (the
# collector, the exit shim, prof-run, prof-ceilings, prof-run's Python instrumentation),
# runtime_libs (the copied shared libraries), devel (annotate.h, the CMake package), examples
# (the capture). A plain `cmake --install` installs every component, the workloads and GPU tests
# too (what scripts/device/stage.sh carries), but not runtime_libs unless asked: stage.sh copies
# its own.
include(CMakePackageConfigHelpers)

# --- the CMake package: fuselens::annotate (header-only; needs the CUDA toolkit's NVTX3) --------
if(TARGET fuselens_annotate)
  set_target_properties(fuselens_annotate PROPERTIES EXPORT_NAME annotate)
  install(TARGETS fuselens_annotate EXPORT FuseLensTargets COMPONENT devel)
  install(EXPORT FuseLensTargets NAMESPACE fuselens:: DESTINATION lib/cmake/FuseLens
          COMPONENT devel)
  configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/FuseLensConfig.cmake.in"
    "${CMAKE_BINARY_DIR}/cmake/FuseLensConfig.cmake" INSTALL_DESTINATION lib/cmake/FuseLens)
  # 0.x: a new minor version may change the API, so only the same major.minor is compatible.
  write_basic_package_version_file("${CMAKE_BINARY_DIR}/cmake/FuseLensConfigVersion.cmake"
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
  install(FILES "${CMAKE_BINARY_DIR}/cmake/FuseLensConfig.cmake"
                "${CMAKE_BINARY_DIR}/cmake/FuseLensConfigVersion.cmake"
          DESTINATION lib/cmake/FuseLens COMPONENT devel)
endif()

# --- the capture the bundle carries, to try prof-analyze on at once ------------------------------
install(FILES "${PROJECT_SOURCE_DIR}/tests/data/fusion_bench.sqlite"
        DESTINATION share/fuselens/examples COMPONENT examples)

# --- the shared libraries of the bundle (cmake/FuseLensBundleLibs.cmake says which and why) -----
set(bundle_targets prof-analyze)
foreach(t prof-run prof-ceilings fuselens_collector fuselens_exit_shim)
  if(TARGET ${t})
    list(APPEND bundle_targets ${t})
  endif()
endforeach()
set(bundle_files "")
foreach(t IN LISTS bundle_targets)
  list(APPEND bundle_files "$<TARGET_FILE:${t}>")
endforeach()
set(bundle_dirs "")
set(bundle_extra "")
if(TARGET CUDA::cupti)
  # CUPTI's folder (lib64, or extras/CUPTI/lib64 in older layouts) and the toolkit's.
  get_target_property(cupti_location CUDA::cupti IMPORTED_LOCATION)
  get_filename_component(cupti_dir "${cupti_location}" DIRECTORY)
  list(APPEND bundle_dirs "${cupti_dir}" "${CUDAToolkit_LIBRARY_DIR}")
  # The range profiler (--metrics): CUPTI loads these with dlopen, so no ELF names them
  # (checkpoint: the collector's kernel replay loads it, collector/src/DeviceCheckpoint.h).
  foreach(name nvperf_host nvperf_target checkpoint)
    find_library(FUSELENS_LIB_${name} ${name} HINTS "${cupti_dir}" "${CUDAToolkit_LIBRARY_DIR}"
                 NO_DEFAULT_PATH)
    if(FUSELENS_LIB_${name})
      list(APPEND bundle_extra "${FUSELENS_LIB_${name}}")
    else()
      message(STATUS "bundle: lib${name}.so not found beside CUPTI; the bundle's --metrics will "
                     "need the host's")
    endif()
  endforeach()
endif()
install(CODE "set(FUSELENS_BUNDLE_FILES \"${bundle_files}\")
set(FUSELENS_BUNDLE_DIRS \"${bundle_dirs}\")
set(FUSELENS_BUNDLE_EXTRA \"${bundle_extra}\")
include(\"${CMAKE_CURRENT_LIST_DIR}/FuseLensBundleLibs.cmake\")"
        COMPONENT runtime_libs EXCLUDE_FROM_ALL)

# --- CPack: the TGZ bundle and the viewer's DEB, one configuration ------------------------------
# Each generator installs only its components (cmake/FuseLensCPackOptions.cmake.in, read by cpack
# per generator) into one package; without -G, cpack makes the bundle.
set(CPACK_PACKAGE_NAME fuselens)
set(CPACK_PACKAGE_VENDOR FuseLens)
set(CPACK_PACKAGE_CONTACT "FuseLens maintainers <fuselens@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "FuseLens: profile GPU workloads and show what kernel fusion buys")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR TGZ)
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_STRIP_FILES ON)  # RelWithDebInfo binaries are ten times their stripped size
set(CPACK_PACKAGE_CHECKSUM SHA256)
set(CPACK_PROJECT_CONFIG_FILE "${CMAKE_BINARY_DIR}/cmake/FuseLensCPackOptions.cmake")
set(FUSELENS_PACKAGE_DIR "${CMAKE_BINARY_DIR}/packages")
set(CPACK_PACKAGE_DIRECTORY "${FUSELENS_PACKAGE_DIR}")  # cpack -B DIR puts them elsewhere
find_program(FUSELENS_DPKG_SHLIBDEPS dpkg-shlibdeps)
# The DEB's Depends without dpkg-shlibdeps: Debian 12's packages of the libraries linked.
set(FUSELENS_DEB_DEPENDS "libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1, libsqlite3-0, libre2-9, zlib1g")
if(TARGET prof-gui)
  string(APPEND FUSELENS_DEB_DEPENDS ", libqt6core6, libqt6gui6, libqt6widgets6, libqt6charts6, libqt6svg6")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/FuseLensCPackOptions.cmake.in"
               "${CMAKE_BINARY_DIR}/cmake/FuseLensCPackOptions.cmake" @ONLY)
include(CPack)

# `bundle` and `viewer_deb`: build what the package holds (programs and their man pages where
# made), then run cpack for it.
get_property(man_targets GLOBAL PROPERTY FUSELENS_MAN_PAGE_TARGETS)
function(fuselens_package_depends package)
  foreach(t IN LISTS ARGN)
    if(TARGET ${t})
      add_dependencies(${package} ${t})
    endif()
    if("${t}_man" IN_LIST man_targets)
      add_dependencies(${package} ${t}_man)
    endif()
  endforeach()
endfunction()
if(TARGET fuselens_collector)  # the bundle is for profiling: not made by analysis-only builds
  add_custom_target(bundle
    COMMAND "${CMAKE_CPACK_COMMAND}" -G TGZ --config "${CMAKE_BINARY_DIR}/CPackConfig.cmake"
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
    COMMENT "Packing the bundle for GPU hosts into ${FUSELENS_PACKAGE_DIR}"
    VERBATIM USES_TERMINAL)
  fuselens_package_depends(bundle ${bundle_targets})
endif()
add_custom_target(viewer_deb
  COMMAND "${CMAKE_CPACK_COMMAND}" -G DEB --config "${CMAKE_BINARY_DIR}/CPackConfig.cmake"
  WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
  COMMENT "Packing the viewer's Debian package into ${FUSELENS_PACKAGE_DIR}"
  VERBATIM USES_TERMINAL)
fuselens_package_depends(viewer_deb prof-analyze prof-gui)
