# One target per folder of src/ (a module), each compiled once as an OBJECT
# library that can include only what its dependency rules allow: its include
# root holds links to its own folder, the folders of the modules it depends
# on (transitively), and the public headers of those modules, and nothing
# else. An include across a forbidden edge fails to compile.
#
#   vyre_module(NAME [HEADERS public headers of include/vyre it implements]
#                    [DEPENDS modules it may include] [WEBGPU]
#                    [LIBRARIES third-party libraries only it uses])
#   vyre_modules_finish()   # after the last vyre_module line
#
# NAME is a folder of src/ at any depth: `aot` is src/aot/ (its own files),
# `aot/remote` is src/aot/remote/ (target vyre_aot_remote). A sub-folder is a
# module of its own: depending on `aot` does not open `aot/remote`, nor the
# reverse; say each edge. A line may name a folder that does not exist yet;
# it is skipped. A folder of src/ without a line fails the configuration.

function(vyre_module name)
  cmake_parse_arguments(M "WEBGPU;NO_UNITY" "" "HEADERS;DEPENDS;LIBRARIES" ${ARGN})
  if(name MATCHES "^/|/$|//|\\.")
    message(FATAL_ERROR "vyre_module(${name}): name a folder of src/ as a relative path such as aot/remote")
  endif()
  set_property(GLOBAL APPEND PROPERTY VYRE_MODULE_NAMES ${name})
  set_property(GLOBAL PROPERTY VYRE_MODULE_${name}_HEADERS ${M_HEADERS})
  set_property(GLOBAL PROPERTY VYRE_MODULE_${name}_DEPENDS ${M_DEPENDS})
  set_property(GLOBAL PROPERTY VYRE_MODULE_${name}_WEBGPU ${M_WEBGPU})
  set_property(GLOBAL PROPERTY VYRE_MODULE_${name}_LIBRARIES ${M_LIBRARIES})
  set_property(GLOBAL PROPERTY VYRE_MODULE_${name}_NO_UNITY ${M_NO_UNITY})
endfunction()

# The module and everything it may include, in `out`.
function(_vyre_module_closure name out)
  set(seen "")
  set(todo ${name})
  while(todo)
    list(POP_FRONT todo m)
    if(m IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${m})
    get_property(deps GLOBAL PROPERTY VYRE_MODULE_${m}_DEPENDS)
    list(APPEND todo ${deps})
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# Makes `folder` (relative to src/) visible under `root` as far as the
# closure allows: the whole folder as one link when it and every module below
# it are in the closure; otherwise a real directory holding a link per file
# of the folder's own (only when its module is in the closure) and, folder by
# folder, what the closure allows of each sub-folder. Nothing when no module
# in or below the folder is in the closure.
function(_vyre_module_link_folder root folder closure present)
  set(below "")
  foreach(p ${present})
    if(p STREQUAL folder OR p MATCHES "^${folder}/")
      list(APPEND below ${p})
    endif()
  endforeach()
  set(inside "")
  set(outside "")
  foreach(p ${below})
    if(p IN_LIST closure)
      list(APPEND inside ${p})
    else()
      list(APPEND outside ${p})
    endif()
  endforeach()
  if(NOT inside)
    return()
  endif()
  if(NOT outside)
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/src/${folder}" "${root}/${folder}" SYMBOLIC)
    return()
  endif()
  file(MAKE_DIRECTORY "${root}/${folder}")
  file(GLOB entries LIST_DIRECTORIES true CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}/src/${folder}"
       "${PROJECT_SOURCE_DIR}/src/${folder}/*")
  foreach(e ${entries})
    if(IS_DIRECTORY "${PROJECT_SOURCE_DIR}/src/${folder}/${e}")
      _vyre_module_link_folder("${root}" "${folder}/${e}" "${closure}" "${present}")
    elseif(folder IN_LIST closure)
      file(CREATE_LINK "${PROJECT_SOURCE_DIR}/src/${folder}/${e}" "${root}/${folder}/${e}" SYMBOLIC)
    endif()
  endforeach()
endfunction()

function(vyre_modules_finish)
  get_property(names GLOBAL PROPERTY VYRE_MODULE_NAMES)
  # Every folder of src/, at any depth, has a line, and every public header an owner.
  file(GLOB_RECURSE children LIST_DIRECTORIES true RELATIVE "${PROJECT_SOURCE_DIR}/src" "${PROJECT_SOURCE_DIR}/src/*")
  list(SORT children)
  set(present "")
  foreach(child ${children})
    if(IS_DIRECTORY "${PROJECT_SOURCE_DIR}/src/${child}")
      if(NOT child IN_LIST names)
        message(FATAL_ERROR "src/${child}/ has no vyre_module(${child} ...) line in CMakeLists.txt: "
                            "say which modules it may include (docs/architecture.md, dependency rules)")
      endif()
      list(APPEND present ${child})
    endif()
  endforeach()
  set(owned export version)
  foreach(m ${names})
    get_property(headers GLOBAL PROPERTY VYRE_MODULE_${m}_HEADERS)
    list(APPEND owned ${headers})
  endforeach()
  # Sub-folders too: include/vyre/lib/reduce.hpp is the header `lib/reduce`.
  file(GLOB_RECURSE public RELATIVE "${PROJECT_SOURCE_DIR}/include/vyre" "${PROJECT_SOURCE_DIR}/include/vyre/*.hpp")
  foreach(h ${public})
    string(REGEX REPLACE "\\.hpp$" "" h "${h}")
    if(NOT h IN_LIST owned)
      message(FATAL_ERROR "include/vyre/${h}.hpp belongs to no module: add it to the HEADERS of the vyre_module line "
                          "of the folder that implements it")
    endif()
  endforeach()

  set(objects "")
  set(libraries "")
  foreach(m ${present})
    _vyre_module_closure(${m} closure)
    # aot/remote's root is module_roots/aot.remote, beside aot's, not in it.
    string(REPLACE "/" "." root_name "${m}")
    set(root "${PROJECT_BINARY_DIR}/module_roots/${root_name}")
    file(REMOVE_RECURSE "${root}")
    file(MAKE_DIRECTORY "${root}/vyre")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/include/vyre/export.hpp" "${root}/vyre/export.hpp" SYMBOLIC)
    file(CREATE_LINK "${PROJECT_BINARY_DIR}/generated/vyre/version.hpp" "${root}/vyre/version.hpp" SYMBOLIC)
    foreach(d ${closure})
      get_property(headers GLOBAL PROPERTY VYRE_MODULE_${d}_HEADERS)
      foreach(h ${headers})
        get_filename_component(folder "${root}/vyre/${h}.hpp" DIRECTORY)
        file(MAKE_DIRECTORY "${folder}")
        file(CREATE_LINK "${PROJECT_SOURCE_DIR}/include/vyre/${h}.hpp" "${root}/vyre/${h}.hpp" SYMBOLIC)
      endforeach()
    endforeach()
    foreach(top ${present})
      if(NOT top MATCHES "/")
        _vyre_module_link_folder("${root}" ${top} "${closure}" "${present}")
      endif()
    endforeach()

    file(GLOB sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/${m}/*.cpp")
    string(REPLACE "/" "_" target "vyre_${m}")  # aot/remote: vyre_aot_remote
    add_library(${target} OBJECT ${sources})
    target_include_directories(${target} PRIVATE "${root}")
    # The libraries inside libvyre; only a module marked WEBGPU sees webgpu.h.
    target_link_libraries(${target} PRIVATE
      spdlog::spdlog OpenSSL::Crypto tomlplusplus::tomlplusplus nlohmann_json::nlohmann_json Threads::Threads)
    # A module's own libraries (hiredis for aot): its objects see their
    # headers, and libvyre links them.
    get_property(own_libraries GLOBAL PROPERTY VYRE_MODULE_${m}_LIBRARIES)
    if(own_libraries)
      target_link_libraries(${target} PRIVATE ${own_libraries})
      list(APPEND libraries ${own_libraries})
    endif()
    get_property(own_webgpu GLOBAL PROPERTY VYRE_MODULE_${m}_WEBGPU)
    if(own_webgpu)
      target_include_directories(${target} SYSTEM PRIVATE "${VYRE_WGPU_DIR}/include")  # third-party
    endif()
    target_compile_options(${target} PRIVATE -Wpedantic)
    vyre_warnings(${target})
    # VYRE_UNITY_BUILD: a module's files compiled a batch at a time (the
    # headers parsed once a batch), except in a module marked NO_UNITY, whose
    # files keep same-named helpers in their anonymous namespaces.
    get_property(no_unity GLOBAL PROPERTY VYRE_MODULE_${m}_NO_UNITY)
    if(VYRE_UNITY_BUILD AND NOT no_unity)
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON)
    endif()
    # Exported: what include/vyre marks VYRE_API, nothing else (tests/exports/).
    set_target_properties(${target} PROPERTIES
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON POSITION_INDEPENDENT_CODE ON)
    list(APPEND objects $<TARGET_OBJECTS:${target}>)
  endforeach()
  set(VYRE_MODULE_OBJECTS ${objects} PARENT_SCOPE)
  set(VYRE_MODULE_LIBRARIES ${libraries} PARENT_SCOPE)
endfunction()
