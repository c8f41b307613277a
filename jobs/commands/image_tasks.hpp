// The image commands' work on one file, as tasks for run_image_job: which operation each command calls, with
// what, and which files may take the JPEG planar path. The front ends turn their options into the parameters
// (the program's parsers in options/, the Python module's process_files keywords in python/src/files.cpp) and
// check each value's form and range; the rules between a command's options, and everything a task does with
// them, are here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands/image_job.hpp"
#include "commands/ops.hpp"

namespace cli {

/// How a front end writes an option in messages. Keys are the Python module's names ("low", "auto_level").
struct OptionSpelling {
    std::string (*option)(const std::string& key);                            ///< "--low", "low="
    std::string (*flag)(const std::string& key);                              ///< "--auto-level", "auto_level=True"
    std::string (*choice)(const std::string& key, const std::string& value);  ///< "--method value", "method='value'"
};

/// stretch's options as given; an absent percent was not given.
struct StretchChoice {
    std::optional<double> low, high;  ///< percents, each in [0, 100]
    bool normalize = false, auto_level = false;
    StretchMode mode = StretchMode::Luma;
};
/// stretch's parameters: low 2 and high 1 unless given (ImageMagick's -normalize), both 0 with auto_level (its
/// -auto-level). Throws UsageError, with the options as `s` writes them, for normalize with auto_level, either
/// of them with low or high, and low + high over 100.
StretchParams stretch_params(const StretchChoice& c, const OptionSpelling& s);

/// threshold's methods, the words both front ends offer: otsu, triangle, value, multiotsu.
const std::vector<std::string>& threshold_methods();

/// threshold's options as given.
struct ThresholdChoice {
    std::string method = "otsu";  ///< one of threshold_methods()
    std::optional<double> value;  ///< T of method value
    bool invert = false;
    std::optional<int> classes;   ///< multiotsu's, 2 to 5; 3 when absent
};
/// threshold's task (threshold_task, or multiotsu_task for method multiotsu). Throws UsageError, with the
/// options as `s` writes them, for value without method value (and method value without it), classes without
/// multiotsu, and value or invert with it.
ImageTask threshold_command_task(const ImageJob& job, const ThresholdChoice& c, const OptionSpelling& s);

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
