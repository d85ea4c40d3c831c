# The fuzz build (VYRE_FUZZ=ON, scripts/fuzz): every object of the build
# carries libFuzzer's coverage hooks and AddressSanitizer with
# UndefinedBehaviorSanitizer; the fuzz targets link libFuzzer's main
# (fuzz/CMakeLists.txt). Undefined behaviour aborts, so the fuzzer sees it
# as a crash instead of a line of text.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "VYRE_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++-14 "
                      "-DCMAKE_C_COMPILER=clang-14, as scripts/fuzz does")
endif()
set(VYRE_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=all)
add_compile_options(-fsanitize=fuzzer-no-link ${VYRE_SANITIZERS} -fno-omit-frame-pointer)
add_link_options(${VYRE_SANITIZERS})
