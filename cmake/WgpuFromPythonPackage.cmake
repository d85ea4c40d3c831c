# For `pip install .` (scikit-build-core): wgpu-native from the `wgpu` wheel
# that pyproject.toml lists as a build requirement, the same pinned wheel
# scripts/setup unpacks into .deps/wgpu for the C++ build. Its files are laid
# out here as VYRE_WGPU_DIR expects (include/, lib/libwgpu_native.so).
find_package(Python COMPONENTS Interpreter REQUIRED)
execute_process(
  COMMAND "${Python_EXECUTABLE}" -c
    "import importlib.metadata as m, importlib.util as u, os; s = u.find_spec('wgpu'); print(m.version('wgpu')); print(os.path.join(list(s.submodule_search_locations)[0], 'resources'))"
  OUTPUT_VARIABLE _vyre_wgpu_out OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _vyre_wgpu_result)
if(NOT _vyre_wgpu_result EQUAL 0)
  message(FATAL_ERROR "the `wgpu` Python package (a build requirement in pyproject.toml) is not importable by ${Python_EXECUTABLE}")
endif()
string(REPLACE "\n" ";" _vyre_wgpu_out "${_vyre_wgpu_out}")
list(GET _vyre_wgpu_out 0 _vyre_wgpu_version)
list(GET _vyre_wgpu_out 1 _vyre_wgpu_resources)
# The pin lives in scripts/setup; pyproject.toml must name the same version.
file(STRINGS "${PROJECT_SOURCE_DIR}/scripts/setup" _vyre_pin REGEX "^WGPU_WHEEL_VERSION=")
string(REPLACE "WGPU_WHEEL_VERSION=" "" _vyre_pin "${_vyre_pin}")
if(NOT _vyre_wgpu_version STREQUAL _vyre_pin)
  message(FATAL_ERROR "wgpu ${_vyre_wgpu_version} was installed for the build, but scripts/setup pins ${_vyre_pin}: "
                      "make pyproject.toml's build requirement wgpu==${_vyre_pin}")
endif()
set(_vyre_stage "${PROJECT_BINARY_DIR}/wgpu-from-wheel")
file(MAKE_DIRECTORY "${_vyre_stage}/include" "${_vyre_stage}/lib")
file(COPY_FILE "${_vyre_wgpu_resources}/webgpu.h" "${_vyre_stage}/include/webgpu.h" ONLY_IF_DIFFERENT)
file(COPY_FILE "${_vyre_wgpu_resources}/wgpu.h" "${_vyre_stage}/include/wgpu.h" ONLY_IF_DIFFERENT)
file(COPY_FILE "${_vyre_wgpu_resources}/libwgpu_native-release.so" "${_vyre_stage}/lib/libwgpu_native.so" ONLY_IF_DIFFERENT)
set(VYRE_WGPU_DIR "${_vyre_stage}" CACHE PATH "wgpu-native (from the wgpu build requirement)" FORCE)
message(STATUS "wgpu-native ${_vyre_wgpu_version} from ${_vyre_wgpu_resources}")
