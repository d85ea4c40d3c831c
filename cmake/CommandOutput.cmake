# Writes what a command prints to a file, at build time (cmake -P):
#   cmake -DOUTPUT=file -P CommandOutput.cmake -- program args...
# CMake's add_custom_command has no portable redirection of stdout.
set(args "")
set(seen_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(seen_dashes)
    list(APPEND args "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(seen_dashes TRUE)
  endif()
endforeach()
execute_process(COMMAND ${args} OUTPUT_FILE "${OUTPUT}" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  file(REMOVE "${OUTPUT}")
  message(FATAL_ERROR "${args} failed: ${result}")
endif()
