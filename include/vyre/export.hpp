// VYRE_API marks what libvyre exports: the library is built with hidden
// visibility, so a declaration of include/vyre without it stays inside.
// tests/exports/ checks that the exported symbols and these headers agree.
#pragma once

#if defined(_WIN32)
#define VYRE_API
#else
#define VYRE_API __attribute__((visibility("default")))
#endif
