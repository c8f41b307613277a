// gpuhist:: from an installed imghist: equalize and Otsu-threshold a synthetic cv::Mat, and check the
// results against OpenCV's own functions (GPU when present, CPU otherwise; the answers are the same).
#include <gpuhist/gpuhist.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdio>

int main() {
    cv::Mat img(480, 640, CV_8UC1);
    for (int y = 0; y < img.rows; ++y)
        for (int x = 0; x < img.cols; ++x) img.at<unsigned char>(y, x) = static_cast<unsigned char>(60 + (x * 7 + y * 3) % 90);
    cv::Mat eq, ref_eq, bin, ref_bin;
    gpuhist::equalizeHist(img, eq);
    cv::equalizeHist(img, ref_eq);
    const double t = gpuhist::threshold(img, bin, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
    const double ref_t = cv::threshold(img, ref_bin, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
    const bool same = cv::norm(eq, ref_eq, cv::NORM_INF) == 0 && cv::norm(bin, ref_bin, cv::NORM_INF) == 0 && t == ref_t;
    std::printf("Otsu threshold %g (OpenCV %g); equalized and thresholded images %s OpenCV's\n", t, ref_t,
                same ? "equal" : "DIFFER FROM");
    return same ? 0 : 1;
}
