# The `imghist` Python module (python/): IMGHIST_BUILD_PYTHON, ON by default when imghist is the top-level
# project and pybind11 (Debian: pybind11-dev; pip: `python3 -m pybind11 --cmakedir` as pybind11_DIR) and
# the Python headers are found.
if(NOT DEFINED IMGHIST_BUILD_PYTHON)
  set(_imghist_python_default OFF)
  if(PROJECT_IS_TOP_LEVEL)
    find_package(Python3 QUIET COMPONENTS Interpreter Development.Module)
    if(Python3_FOUND)
      find_package(pybind11 CONFIG QUIET)
    endif()
    if(Python3_FOUND AND pybind11_FOUND)
      set(_imghist_python_default ON)
    else()
      message(STATUS "imghist: Python module not built (needs the Python 3 headers and pybind11: "
                     "python3-dev and pybind11-dev on Debian)")
    endif()
  endif()
endif()
option(IMGHIST_BUILD_PYTHON "Build the imghist Python module (pybind11)" ${_imghist_python_default})
# The module's image files (imghist.io, imghist.imread / imwrite, imghist.dask.process_files) are imghist_io and
# the image jobs (imghist_jobs): on when they are built (IMGHIST_BUILD_TOOLS; they bring OpenCV).
if(TARGET imghist_jobs)
  set(_imghist_python_files_default ON)
else()
  set(_imghist_python_files_default OFF)
endif()
option(IMGHIST_PYTHON_FILES "The Python module's image files and per-file work (needs IMGHIST_BUILD_TOOLS)"
  ${_imghist_python_files_default})
if(IMGHIST_BUILD_PYTHON)
  if(IMGHIST_PYTHON_FILES AND NOT TARGET imghist_jobs)
    message(FATAL_ERROR "imghist: IMGHIST_PYTHON_FILES needs the image jobs (IMGHIST_BUILD_TOOLS=ON, with "
                        "OpenCV); or pass -DIMGHIST_PYTHON_FILES=OFF for a module without image files")
  endif()
  add_subdirectory(python)
endif()
