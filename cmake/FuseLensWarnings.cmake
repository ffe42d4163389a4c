# fuselens_project_options(TARGET): warnings (and, with FUSELENS_SANITIZE, sanitizers) for
# FuseLens's own code. Third-party headers come in as SYSTEM includes and stay quiet.
function(fuselens_project_options target)
  set(cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  if(FUSELENS_WARNINGS_AS_ERRORS)
    list(APPEND cxx_warnings -Werror)
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${cxx_warnings}>)
  if(FUSELENS_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
