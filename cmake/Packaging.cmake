# Debian packages from the install rules' three components (`cpack -G DEB`
# in a build folder; scripts/deb):
#
#   libvyre      libvyre.so.0 and wgpu-native, which it loads from beside itself
#   libvyre-dev  headers, the CMake package vyre::vyre, vyre.pc, the libvyre.so link
#   vyre         the command line, its shell completions and man page
#
# Their Depends come from dpkg-shlibdeps (spdlog, fmt, libssl3, hiredis, the
# C++ runtime), so they follow the libraries the build really linked; each
# package of vyre's own needs the same version of the one below it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vyre)
set(CPACK_PACKAGE_VENDOR "vyre-cpp")
set(CPACK_PACKAGE_CONTACT "vyre-cpp developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL libvyre libvyre-dev vyre)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps finds libvyre and wgpu-native (which has no SONAME and no
# Debian package) here, as libraries of these packages themselves.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${PROJECT_BINARY_DIR}" "${VYRE_WGPU_LIBDIR}")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# The components' DEPENDS below become Depends: libvyre (= VERSION).
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_DEBIAN_LIBVYRE_PACKAGE_NAME libvyre)
set(CPACK_DEBIAN_LIBVYRE_PACKAGE_SECTION libs)
# wgpu-native loads the Vulkan loader at run time, which dpkg-shlibdeps cannot see.
set(CPACK_DEBIAN_LIBVYRE_PACKAGE_DEPENDS "libvulkan1")
set(CPACK_DEBIAN_LIBVYRE_PACKAGE_RECOMMENDS "mesa-vulkan-drivers")
set(CPACK_COMPONENT_LIBVYRE_DESCRIPTION "vyre's shared library and the wgpu-native it runs on")

set(CPACK_DEBIAN_LIBVYRE-DEV_PACKAGE_NAME libvyre-dev)
set(CPACK_DEBIAN_LIBVYRE-DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_LIBVYRE-DEV_DESCRIPTION "vyre's headers, CMake package (vyre::vyre) and pkg-config file")
set(CPACK_COMPONENT_LIBVYRE-DEV_DEPENDS libvyre)

set(CPACK_DEBIAN_VYRE_PACKAGE_NAME vyre)
set(CPACK_DEBIAN_VYRE_PACKAGE_SECTION devel)
set(CPACK_COMPONENT_VYRE_DESCRIPTION "the vyre command line: run, check and lower programs, inspect the cache")
set(CPACK_COMPONENT_VYRE_DEPENDS libvyre)

include(CPack)
