# Man pages of the command-line tools, generated at build time from their --help by help2man
# (scripts/setup.sh installs it) into <build>/man/<tool>.1 and installed into share/man/man1 with
# the tool's install component. Without help2man (or with -DFUSELENS_MAN_PAGES=OFF) no page is
# made and configure says so. The pages are part of `all`; installing is OPTIONAL so that an
# install of a partial build (scripts/device/stage.sh builds a few targets) does not fail.
# Off by default in sanitized builds (FUSELENS_SANITIZE), where a leak report at a tool's exit
# would fail the build for a man page.
if(FUSELENS_SANITIZE)
  set(fuselens_man_default OFF)
else()
  set(fuselens_man_default ON)
endif()
option(FUSELENS_MAN_PAGES "Generate man pages from the tools' --help with help2man when it is found"
       ${fuselens_man_default})
find_program(FUSELENS_HELP2MAN help2man)
set(FUSELENS_MAN_DIR "${CMAKE_BINARY_DIR}/man")

# fuselens_add_man_page(TARGET NAME_LINE COMPONENT [SUBCOMMANDS] [ENV VAR=VALUE...])
#   TARGET      the executable target (its --help is read; --version is not asked: not every
#               tool has one, so the project's version is given to help2man)
#   NAME_LINE   the text after "tool \-" in the page's NAME section
#   COMPONENT   the install component of the page (the tool's own)
#   SUBCOMMANDS append a SUBCOMMANDS section holding `TARGET <sub> --help` of every subcommand the
#               main --help lists under "Subcommands:" (cmake/FuseLensManSubcommands.cmake)
#   ENV         environment for running the tool (prof-gui: QT_QPA_PLATFORM=offscreen)
function(fuselens_add_man_page target name_line component)
  cmake_parse_arguments(ARG "SUBCOMMANDS" "" "ENV" ${ARGN})
  if(NOT FUSELENS_MAN_PAGES OR NOT FUSELENS_HELP2MAN OR NOT TARGET ${target})
    return()
  endif()
  set(page "${FUSELENS_MAN_DIR}/${target}.1")
  set(include_args "")
  set(include_file "")
  if(ARG_SUBCOMMANDS)
    set(include_file "${FUSELENS_MAN_DIR}/${target}.subcommands.h2m")
    add_custom_command(OUTPUT "${include_file}"
      COMMAND "${CMAKE_COMMAND}" -E env ${ARG_ENV}
              "${CMAKE_COMMAND}" "-DPROGRAM=$<TARGET_FILE:${target}>" "-DOUTPUT=${include_file}"
              -P "${PROJECT_SOURCE_DIR}/cmake/FuseLensManSubcommands.cmake"
      DEPENDS ${target} "${PROJECT_SOURCE_DIR}/cmake/FuseLensManSubcommands.cmake"
      COMMENT "Collecting the subcommands' --help of ${target}"
      VERBATIM)
    set(include_args "--include=${include_file}")
  endif()
  add_custom_command(OUTPUT "${page}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${FUSELENS_MAN_DIR}"
    COMMAND "${CMAKE_COMMAND}" -E env ${ARG_ENV}
            "${FUSELENS_HELP2MAN}" --no-info --section=1 "--name=${name_line}"
            "--version-string=${PROJECT_VERSION}" "--source=FuseLens ${PROJECT_VERSION}"
            "--manual=FuseLens Manual" ${include_args} "--output=${page}" "$<TARGET_FILE:${target}>"
    DEPENDS ${target} ${include_file}
    COMMENT "Generating the man page ${target}.1 (help2man)"
    VERBATIM)
  add_custom_target(${target}_man ALL DEPENDS "${page}")
  install(FILES "${page}" DESTINATION share/man/man1 COMPONENT ${component} OPTIONAL)
  set_property(GLOBAL APPEND PROPERTY FUSELENS_MAN_PAGE_TARGETS ${target}_man)
endfunction()

if(FUSELENS_MAN_PAGES AND NOT FUSELENS_HELP2MAN)
  message(STATUS "man pages: help2man not found, no man pages are generated (scripts/setup.sh "
                 "installs it; -DFUSELENS_MAN_PAGES=OFF silences this)")
endif()

# The pages (this file is included once every target exists).
fuselens_add_man_page(prof-analyze "analyze FuseLens GPU captures" analysis SUBCOMMANDS)
fuselens_add_man_page(prof-run "run a CUDA program under the FuseLens collector" collector)
fuselens_add_man_page(prof-ceilings "measure the running GPU's roofline ceilings" collector)
# Qt needs a platform plugin even for --help: offscreen needs no display.
fuselens_add_man_page(prof-gui "inspect FuseLens captures in a desktop window" gui
  ENV QT_QPA_PLATFORM=offscreen)
