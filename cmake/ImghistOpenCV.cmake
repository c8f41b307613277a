# Finds OpenCV core + imgproc (+ imgcodecs when present) for the build and defines imghist_opencv
# (INTERFACE target) and imghist_opencv_imgcodecs. The search itself is cmake/imghistLocateOpenCV.cmake.
if(TARGET imghist_opencv)
  return()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/imghistLocateOpenCV.cmake)
if(NOT IMGHIST_OPENCV_FOUND)
  message(FATAL_ERROR "imghist: OpenCV core + imgproc not found (missing: ${IMGHIST_OPENCV_MISSING}); on Debian "
                      "install libopencv-core-dev and libopencv-imgproc-dev, or set OpenCV_DIR. Without OpenCV, "
                      "build libimghist alone: -DIMGHIST_WITH_OPENCV=OFF -DIMGHIST_BUILD_TOOLS=OFF "
                      "-DIMGHIST_BUILD_TESTS=OFF -DIMGHIST_BUILD_BENCH=OFF -DIMGHIST_BUILD_SAMPLES=OFF")
endif()
add_library(imghist_opencv INTERFACE)
target_include_directories(imghist_opencv INTERFACE ${IMGHIST_OPENCV_INCLUDE_DIRS})
target_link_libraries(imghist_opencv INTERFACE ${IMGHIST_OPENCV_LIBRARIES})
find_library(IMGHIST_OPENCV_IMGCODECS opencv_imgcodecs)
add_library(imghist_opencv_imgcodecs INTERFACE)
if(IMGHIST_OPENCV_IMGCODECS)
  target_link_libraries(imghist_opencv_imgcodecs INTERFACE imghist_opencv ${IMGHIST_OPENCV_IMGCODECS})
endif()
