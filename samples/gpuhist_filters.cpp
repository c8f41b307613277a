// gpuhist_filters — equalize and Otsu-threshold a cv::cuda::GpuMat with gpuhist, the OpenCV-compatible
// filters of imghist, and check the results against OpenCV's CPU functions.
//
//   gpuhist_filters_sample [image] [output-prefix]
//
// The image (default: samples/images/camera.png) is read with OpenCV's imgcodecs when it is available;
// otherwise a synthetic scene is generated. Where OpenCV has no CUDA support (Debian's packages, for
// example), cv::cuda::GpuMat cannot allocate device memory: the sample keeps its images in
// gpuhist::DeviceImage objects, which own the memory, and views them as GpuMat. Without a CUDA device it
// runs the same functions on cv::Mat, which use the CPU backend and give the same answer.
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#ifdef GPUHIST_SAMPLE_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif

#include <cmath>
#include <cstdio>
#include <string>

#include "gpuhist/gpuhist.hpp"

namespace {

cv::Mat load(const std::string& path) {
#ifdef GPUHIST_SAMPLE_HAVE_IMGCODECS
    cv::Mat img = cv::imread(path, cv::IMREAD_GRAYSCALE);
    if (!img.empty()) {
        std::printf("input: %s (%d x %d)\n", path.c_str(), img.cols, img.rows);
        return img;
    }
    std::printf("could not read %s; using a generated image\n", path.c_str());
#else
    std::printf("OpenCV imgcodecs is not available (%s not read); using a generated image\n", path.c_str());
#endif
    cv::Mat gen(480, 640, CV_8UC1);
    for (int y = 0; y < gen.rows; ++y)
        for (int x = 0; x < gen.cols; ++x)  // a dim, low-contrast scene with two regions
            gen.at<unsigned char>(y, x) = cv::saturate_cast<unsigned char>(
                (x < 320 ? 60 : 110) + 12 * std::sin(x / 17.0) * std::cos(y / 11.0));
    std::printf("input: generated %d x %d\n", gen.cols, gen.rows);
    return gen;
}

void save(const std::string& prefix, const char* name, const cv::Mat& m) {
#ifdef GPUHIST_SAMPLE_HAVE_IMGCODECS
    if (prefix.empty()) return;
    const std::string path = prefix + name;
    if (cv::imwrite(path, m)) std::printf("wrote %s\n", path.c_str());
#else
    (void)prefix;
    (void)name;
    (void)m;
#endif
}

}  // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : std::string(GPUHIST_SAMPLE_IMAGE);
    const std::string prefix = argc > 2 ? argv[2] : std::string();
    try {
        const cv::Mat host = load(path);
        cv::Mat equalized, binary;
        double otsu = 0;

        if (imghist::cuda_available()) {
            std::printf("device: %s\n", imghist::cuda_device_name(0).c_str());
            // Owning device images, viewed as GpuMat (works with every OpenCV build).
            gpuhist::DeviceImage src_store, eq_store, bin_store;
            cv::cuda::GpuMat src = gpuhist::createDeviceMat(src_store, host.rows, host.cols, CV_8UC1);
            cv::cuda::GpuMat eq = gpuhist::createDeviceMat(eq_store, host.rows, host.cols, CV_8UC1);
            cv::cuda::GpuMat bin = gpuhist::createDeviceMat(bin_store, host.rows, host.cols, CV_8UC1);
            src_store.upload(imghist::view_of(host));

            gpuhist::equalizeHist(src, eq);  // histogram, table and apply stay on the device
            otsu = gpuhist::threshold(src, bin, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);

            equalized.create(host.size(), CV_8UC1);
            binary.create(host.size(), CV_8UC1);
            eq_store.download(equalized.data, equalized.step);
            bin_store.download(binary.data, binary.step);
        } else {
            std::printf("no CUDA device: running the same gpuhist functions on cv::Mat (CPU backend)\n");
            gpuhist::equalizeHist(host, equalized);
            otsu = gpuhist::threshold(host, binary, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
        }

        // The answers are OpenCV's, to the last bit.
        cv::Mat ref_eq, ref_bin;
        cv::equalizeHist(host, ref_eq);
        const double ref_otsu = cv::threshold(host, ref_bin, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
        const bool same = cv::countNonZero(equalized != ref_eq) == 0 && cv::countNonZero(binary != ref_bin) == 0 &&
                          otsu == ref_otsu;
        std::printf("Otsu threshold: %g (OpenCV: %g)\n", otsu, ref_otsu);
        std::printf("equalized and thresholded images %s OpenCV's\n", same ? "are identical to" : "DIFFER from");
        save(prefix, "equalized.png", equalized);
        save(prefix, "otsu.png", binary);
        return same ? 0 : 1;
    } catch (const cv::Exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
}
