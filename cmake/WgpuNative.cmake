# wgpu-native as an imported library, from the folder scripts/setup unpacks
# from the pinned `wgpu` wheel. The library has no SONAME, so it is linked by
# name (-lwgpu_native) and found at run time through the RPATH.
set(VYRE_WGPU_LIBDIR "${VYRE_WGPU_DIR}/lib")
set(VYRE_WGPU_LIBRARY "${VYRE_WGPU_LIBDIR}/libwgpu_native.so")
if(NOT EXISTS "${VYRE_WGPU_LIBRARY}" OR NOT EXISTS "${VYRE_WGPU_DIR}/include/webgpu.h")
  message(FATAL_ERROR
    "wgpu-native not found in ${VYRE_WGPU_DIR}.\n"
    "Run scripts/setup (it fetches the pinned wgpu wheel from PyPI), "
    "or pass -DVYRE_WGPU_DIR=<folder with include/webgpu.h and lib/libwgpu_native.so>.")
endif()
add_library(wgpu_native SHARED IMPORTED)
set_target_properties(wgpu_native PROPERTIES
  IMPORTED_LOCATION "${VYRE_WGPU_LIBRARY}"
  IMPORTED_NO_SONAME TRUE
  INTERFACE_INCLUDE_DIRECTORIES "${VYRE_WGPU_DIR}/include")
