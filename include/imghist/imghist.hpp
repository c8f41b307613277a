// imghist — umbrella header: images, batches, histograms, owning buffers and errors (no OpenCV or CUDA headers
// needed). The filters (filters.hpp, batch_filters.hpp), the policy overrides (policy.hpp) and the OpenCV bridge
// (opencv.hpp) are included on their own.
#pragma once

#include "imghist/buffer.hpp"
#include "imghist/error.hpp"
#include "imghist/histogram.hpp"
#include "imghist/image.hpp"
#include "imghist/image_batch.hpp"
#include "imghist/version.hpp"
