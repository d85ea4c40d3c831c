# VYRE_PYTHON_DEFAULT: ON when a Python 3 interpreter with nanobind is found
# (scripts/setup installs the pinned nanobind into .venv and configures with
# -DPython_EXECUTABLE=.venv/bin/python), so that a machine without it still
# builds the C++ library, the CLI and the tests.
set(VYRE_PYTHON_DEFAULT OFF)
if(NOT DEFINED VYRE_BUILD_PYTHON)
  find_package(Python 3.9 COMPONENTS Interpreter QUIET)
  if(Python_Interpreter_FOUND)
    execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                    OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE _vyre_nb_result)
    if(_vyre_nb_result EQUAL 0)
      set(VYRE_PYTHON_DEFAULT ON)
    endif()
  endif()
endif()
