// imghist — umbrella header: everything in the core library (no OpenCV or CUDA headers needed).
#pragma once

#include "imghist/buffer.hpp"
#include "imghist/error.hpp"
#include "imghist/histogram.hpp"
#include "imghist/image.hpp"
#include "imghist/image_batch.hpp"
#include "imghist/version.hpp"
