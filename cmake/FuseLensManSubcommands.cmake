# cmake -DPROGRAM=<tool> -DOUTPUT=<file> -P FuseLensManSubcommands.cmake
# Writes a help2man include file (--include) with a SUBCOMMANDS section: for every subcommand that
# `PROGRAM --help` lists under "Subcommands:" (CLI11's layout: two spaces, the name, spaces, its
# description), the output of `PROGRAM <sub> --help` as a preformatted block. Fails when the
# program's help cannot be read or lists no subcommand, so a page never silently loses them.
if(NOT PROGRAM OR NOT OUTPUT)
  message(FATAL_ERROR "usage: cmake -DPROGRAM=<tool> -DOUTPUT=<file> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()

execute_process(COMMAND "${PROGRAM}" --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --help failed (${rc})")
endif()

# The names in the "Subcommands:" block: its lines indented by exactly two spaces (wrapped
# descriptions are indented further), up to the first line that is not indented.
string(REGEX MATCH "\nSubcommands:\n(  [^\n]*\n)+" block "\n${help}\n")
string(REGEX MATCHALL "\n  [A-Za-z0-9][A-Za-z0-9_-]*" names "${block}")
set(subcommands "")
foreach(name IN LISTS names)
  string(STRIP "${name}" name)
  list(APPEND subcommands "${name}")
endforeach()
if(NOT subcommands)
  message(FATAL_ERROR "${PROGRAM} --help lists no subcommand under 'Subcommands:'")
endif()

# roff-safe text: backslashes written as \e, hyphens as \-, and a line starting with a control
# character ('.' or ') protected by \&.
function(roff_escape out text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

set(page "[SUBCOMMANDS]\n")
foreach(sub IN LISTS subcommands)
  execute_process(COMMAND "${PROGRAM}" ${sub} --help OUTPUT_VARIABLE sub_help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${sub} --help failed (${rc})")
  endif()
  roff_escape(sub_help "${sub_help}")
  string(APPEND page ".SS ${sub}\n.nf\n${sub_help}\n.fi\n")
endforeach()
file(WRITE "${OUTPUT}" "${page}")
