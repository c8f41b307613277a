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

/// OpenCV's equalization of the luma of a BGR or BGRA image (YCrCb, alpha kept): the reference for the
/// luma mode of the filters and of the program.
inline cv::Mat opencv_equalize_luma(const cv::Mat& src) {
    cv::Mat bgr, ycc, out;
    if (src.channels() == 4) cv::cvtColor(src, bgr, cv::COLOR_BGRA2BGR);
    else bgr = src;
    cv::cvtColor(bgr, ycc, cv::COLOR_BGR2YCrCb);
    std::vector<cv::Mat> planes;
    cv::split(ycc, planes);
    cv::equalizeHist(planes[0], planes[0]);
    cv::merge(planes, ycc);
    cv::cvtColor(ycc, out, cv::COLOR_YCrCb2BGR);
    if (src.channels() == 4) {
        std::vector<cv::Mat> s4, o3;
        cv::split(src, s4);
        cv::split(out, o3);
        o3.push_back(s4[3]);
        cv::merge(o3, out);
    }
    return out;
}
