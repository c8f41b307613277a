// The image commands' work on one file, as tasks for run_image_job: which operation each command calls, with
// what, and which files may take the JPEG planar path. The front ends turn their options into the parameters
// (the program's parsers in options/, the Python module's process_files keywords in python/src/files.cpp);
// everything a task does with them is here.
#pragma once

#include "commands/image_job.hpp"
#include "commands/ops.hpp"

namespace cli {

/// equalize: luma (a JPEG written as a JPEG is equalized on its stored Y plane) or each channel.
ImageTask equalize_task(const ImageJob& job, EqualizeMode mode);
/// stretch by the percentiles of `p` (luma mode: JPEG to JPEG on the stored Y plane).
ImageTask stretch_task(const ImageJob& job, const StretchParams& p);
/// clahe with `p` (its memory bound taken from the job's --max-memory).
ImageTask clahe_task(const ImageJob& job, ClaheParams p);
/// threshold by `p` (Otsu, triangle or a value); each item's note names the threshold used.
ImageTask threshold_task(const ImageJob& job, const ThresholdParams& p);
/// multi-level Otsu into `classes` classes, written as a label image; each item's note lists the thresholds.
ImageTask multiotsu_task(const ImageJob& job, int classes);
/// match to the reference REF, the path before OUT (the last path with --in-place): taken out of the inputs,
/// read once (an image, or a histogram JSON of `imghist hist --format json`) before any file is processed.
ImageTask match_task(ImageJob job);

}  // namespace cli
