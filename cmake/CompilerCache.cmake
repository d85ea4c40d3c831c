# Compiles through ccache when it is installed (VYRE_CCACHE=OFF: never), in
# every build of the tree: the main one, the fuzz and sanitized ones, a
# clean clone's. Paths under the source folder are hashed relative to it and
# the build folder is not hashed, so a second clone or build folder on the
# same machine reuses the objects of the first (CI's fresh clone among them).
# A launcher the user set (CMAKE_CXX_COMPILER_LAUNCHER) is left alone.
option(VYRE_CCACHE "Compile through ccache when it is installed" ON)
if(VYRE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(VYRE_CCACHE_PROGRAM ccache)
  if(VYRE_CCACHE_PROGRAM)
    set(launcher "${CMAKE_COMMAND}" -E env "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" CCACHE_NOHASHDIR=true
                 "${VYRE_CCACHE_PROGRAM}")
    set(CMAKE_C_COMPILER_LAUNCHER ${launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
  endif()
endif()
