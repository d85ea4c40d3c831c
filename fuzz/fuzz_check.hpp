// How a fuzz target reports a broken property: the property in words on
// stderr, then a trap, which libFuzzer records as a crash with its input.
// (An exception would do for "does not crash" only; a property needs this.)
#pragma once

#include <cstdio>

#define FUZZ_REQUIRE(condition, property)                                         \
  do {                                                                            \
    if (!(condition)) {                                                           \
      std::fprintf(stderr, "fuzz property violated: %s (%s:%d)\n", property,      \
                   __FILE__, __LINE__);                                           \
      __builtin_trap();                                                           \
    }                                                                             \
  } while (0)
