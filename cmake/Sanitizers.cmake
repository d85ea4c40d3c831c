# The sanitized builds of the test suite (scripts/sanitize, docs/ci.md):
# VYRE_SANITIZE=address,undefined (AddressSanitizer with LeakSanitizer, and
# UndefinedBehaviorSanitizer) or VYRE_SANITIZE=thread (ThreadSanitizer).
# Every object of the build is instrumented: the library's modules, the CLI,
# the tests and their worker programs. Third-party libraries (wgpu-native,
# the Vulkan driver, the system's spdlog, OpenSSL, hiredis, GoogleTest) are
# not; their suppressions are in tests/sanitizers/. Undefined behaviour
# aborts (-fno-sanitize-recover), so a report is a failed test, not a line
# of text.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "VYRE_SANITIZE needs clang: configure with -DCMAKE_CXX_COMPILER=clang++-14 "
                      "-DCMAKE_C_COMPILER=clang-14, as scripts/sanitize does")
endif()
if(VYRE_SANITIZE STREQUAL "address,undefined")
  set(VYRE_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(VYRE_SANITIZE STREQUAL "thread")
  set(VYRE_SANITIZE_FLAGS -fsanitize=thread)
else()
  message(FATAL_ERROR "VYRE_SANITIZE='${VYRE_SANITIZE}': 'address,undefined' or 'thread'")
endif()
if(VYRE_FUZZ)
  message(FATAL_ERROR "VYRE_SANITIZE and VYRE_FUZZ are separate builds (scripts/sanitize, scripts/fuzz)")
endif()
add_compile_options(${VYRE_SANITIZE_FLAGS} -fno-omit-frame-pointer)
add_link_options(${VYRE_SANITIZE_FLAGS})
