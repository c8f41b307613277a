# Builds and runs one consumer of imghist for ctest (see tests/consumers/CMakeLists.txt):
#
#   cmake -DSOURCE=<project> -DBINARY=<dir> [-DARGS=<a|b|...>] [-DRUN=<cmd|cmd...>] [-DEXPECT_ERROR=<regex>]
#         [-DCONFIGURE_ONLY=ON] -P consumer.cmake
#                                configure SOURCE with the -D arguments in ARGS, build it, run each command
#                                (programs relative to BINARY); with EXPECT_ERROR the configuration must
#                                fail with a message matching it instead; CONFIGURE_ONLY stops after it
#   cmake -DPKG_CONFIG_DIR=<dir> -DCXX=<compiler> -DBINARY=<dir> -DPROGRAMS=<name=source:package|...>
#         -DRUN=<cmd|...> -P consumer.cmake      compile each source with `pkg-config --cflags --libs package`
#                                                (.pc files from PKG_CONFIG_DIR) and run the commands
# Lists are |-separated (ctest would split a ;-list).
cmake_minimum_required(VERSION 3.24)

function(run_checked what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE "${BINARY}")
file(MAKE_DIRECTORY "${BINARY}")

if(PKG_CONFIG_DIR)
  set(ENV{PKG_CONFIG_PATH} "${PKG_CONFIG_DIR}")
  string(REPLACE "|" ";" programs "${PROGRAMS}")
  foreach(p IN LISTS programs)
    string(REGEX MATCH "^([^=]+)=([^:]+):(.+)$" _ "${p}")
    set(name "${CMAKE_MATCH_1}")
    set(source "${CMAKE_MATCH_2}")
    set(package "${CMAKE_MATCH_3}")
    execute_process(COMMAND pkg-config --cflags --libs "${package}" RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                    ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "pkg-config --cflags --libs ${package} failed:\n${err}")
    endif()
    message("${package}: ${flags}")
    separate_arguments(flags UNIX_COMMAND "${flags}")
    run_checked("compiling ${source}" "${CXX}" -std=c++17 "${source}" ${flags} -o "${BINARY}/${name}")
  endforeach()
  # The programs find the libraries through the directory the .pc files point to.
  execute_process(COMMAND pkg-config --variable=libdir imghist OUTPUT_VARIABLE libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(ENV{LD_LIBRARY_PATH} "${libdir}")
else()
  string(REPLACE "|" ";" args "${ARGS}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${BINARY}" ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(DEFINED EXPECT_ERROR)
    if(rc EQUAL 0)
      message(FATAL_ERROR "the configuration succeeded; it should have failed with: ${EXPECT_ERROR}\n${out}")
    endif()
    if(NOT "${out}${err}" MATCHES "${EXPECT_ERROR}")
      message(FATAL_ERROR "the configuration failed, but without a message matching '${EXPECT_ERROR}':\n${out}${err}")
    endif()
    message("configuration failed as expected:\n${err}")
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring ${SOURCE} failed (${rc}):\n${out}${err}")
  endif()
  if(CONFIGURE_ONLY)
    message("${out}")
    return()
  endif()
  run_checked("building ${SOURCE}" "${CMAKE_COMMAND}" --build "${BINARY}" -j2)
endif()

string(REPLACE "|" ";" commands "${RUN}")
foreach(c IN LISTS commands)
  separate_arguments(cmd UNIX_COMMAND "${c}")
  list(POP_FRONT cmd program)
  run_checked("${c}" "${BINARY}/${program}" ${cmd})
endforeach()
