# Install-time script (install(CODE) in cmake/FuseLensPackaging.cmake, component runtime_libs):
# copies into <prefix>/lib the shared libraries that FuseLens's programs and collector need and
# that a GPU host with a driver and no build tools lacks, each as a real file under its SONAME.
# Inputs (set by the install code):
#   FUSELENS_BUNDLE_FILES     the ELF files whose dependencies are resolved (the build tree's)
#   FUSELENS_BUNDLE_DIRS      extra search folders (the CUDA toolkit's library folders)
#   FUSELENS_BUNDLE_EXTRA     libraries loaded with dlopen, copied as they are (CUPTI's
#                             libnvperf_host/target, for --metrics)
# Left out, because the host has them or must provide its own:
#   - glibc (libc, libm, libdl, libpthread, librt, libutil, libresolv, the dynamic loader);
#   - libstdc++ and libgcc_s (the compiler runtime every C++ host program, python included, has
#     already loaded: a second copy in one process breaks exceptions and RTTI);
#   - zlib, liblzma, libbz2, libzstd (in Debian's Essential set: dpkg needs them);
#   - the driver: libcuda and libnvidia-* (they must match the kernel module).
# Everything else the files need is copied, the CUDA toolkit's libcudart and libcupti included
# (redistributable; the collector was built against that CUPTI and needs that version). A
# dependency that cannot be resolved here is an error: the archive would not run elsewhere.
set(_system_libs
  "^ld-linux" "^libc\\.so" "^libm\\.so" "^libdl\\.so" "^libpthread\\.so" "^librt\\.so"
  "^libutil\\.so" "^libresolv\\.so" "^libmvec\\.so"
  "^libstdc\\+\\+\\.so" "^libgcc_s\\.so"
  "^libz\\.so" "^liblzma\\.so" "^libbz2\\.so" "^libzstd\\.so"
  "^libcuda\\.so" "^libnvidia-")
file(GET_RUNTIME_DEPENDENCIES
  RESOLVED_DEPENDENCIES_VAR _resolved
  UNRESOLVED_DEPENDENCIES_VAR _unresolved
  LIBRARIES ${FUSELENS_BUNDLE_FILES}
  DIRECTORIES ${FUSELENS_BUNDLE_DIRS}
  PRE_EXCLUDE_REGEXES ${_system_libs}
  POST_EXCLUDE_REGEXES "^/lib(64)?/ld-linux")
if(_unresolved)
  message(FATAL_ERROR "bundle: cannot resolve ${_unresolved} (needed by ${FUSELENS_BUNDLE_FILES})")
endif()
set(_dest "${CMAKE_INSTALL_PREFIX}/lib")
foreach(_lib IN LISTS _resolved FUSELENS_BUNDLE_EXTRA)
  # Under the name the loader asks for (the SONAME, the path's file name here), the real file's
  # bytes: no symlink chain to carry.
  get_filename_component(_name "${_lib}" NAME)
  file(REAL_PATH "${_lib}" _real)
  file(INSTALL DESTINATION "${_dest}" TYPE FILE FILES "${_real}" RENAME "${_name}"
       PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                   WORLD_READ WORLD_EXECUTE)
endforeach()
