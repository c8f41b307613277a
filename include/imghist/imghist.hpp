// imghist — umbrella header: everything in libimghist, histograms and filters (no OpenCV or CUDA headers
// needed; imghist/opencv.hpp is the opt-in OpenCV interop).
#pragma once

#include "imghist/batch_filters.hpp"
#include "imghist/buffer.hpp"
#include "imghist/error.hpp"
#include "imghist/filters.hpp"
#include "imghist/histogram.hpp"
#include "imghist/image.hpp"
#include "imghist/image_batch.hpp"
#include "imghist/policy.hpp"
#include "imghist/version.hpp"
