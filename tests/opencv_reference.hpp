// OpenCV compositions the tests of several folders take as their reference.
#pragma once

#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

/// OpenCV's equalization of every channel on its own.
inline cv::Mat opencv_equalize_per_channel(const cv::Mat& src) {
    std::vector<cv::Mat> planes;
    cv::split(src, planes);
    for (auto& p : planes) cv::equalizeHist(p, p);
    cv::Mat out;
    cv::merge(planes, out);
    return out;
}
