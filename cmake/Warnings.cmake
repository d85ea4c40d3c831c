# Warnings for the project's own code (docs/ci.md): every target built from
# this repository's sources compiles with -Wall -Wextra, and with VYRE_WERROR
# (off by default; on in scripts/setup, scripts/sanitize and scripts/fuzz,
# so in CI) a warning is an error. Set per target, never on the directory: third-party code built in the
# tree (nanobind's static library) keeps its own flags, and nothing reaches the
# installed package's interface, so a consumer's build never gets -Werror
# (tests/install/ checks). Third-party headers come in as system headers
# (-isystem), where compilers do not warn.
function(vyre_warnings)
  foreach(target ${ARGN})
    target_compile_options(${target} PRIVATE -Wall -Wextra)
    if(VYRE_WERROR)
      set_target_properties(${target} PROPERTIES COMPILE_WARNING_AS_ERROR ON)
    endif()
  endforeach()
endfunction()
