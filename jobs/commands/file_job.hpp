// An image command's files one at a time, for front ends that schedule the files themselves (the Python
// module's imghist.dask.process_files, which makes its ImageTask from keyword options: image_tasks.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace cli {

struct ImageTask;

/// The files of an image command handed out one at a time, for callers that schedule them themselves (the
/// Python module's imghist.dask.process_files runs each as a task on a cluster). plan() is run_image_job's
/// plan: the same output names, the same refusals before anything is written (an output that is an input, two
/// inputs with one output), --skip-existing; run() is run_image_job's work on one file through the host
/// codecs — read, decode, --auto-orient, the command's process, --flatten / --depth / --strip, encode, and the
/// atomic, durable write — so its output is byte for byte the folder run's for that file with the same
/// options (the GPU JPEG pipeline is not used). Thread-safe: run() may be called from several threads at once.
class ImageFileJob {
public:
    explicit ImageFileJob(ImageTask task);
    ~ImageFileJob();
    ImageFileJob(const ImageFileJob&) = delete;
    ImageFileJob& operator=(const ImageFileJob&) = delete;

    struct Planned {
        std::string input, output;
        bool skipped = false;  ///< --skip-existing and the output exists
    };
    /// The inputs (files, folders, patterns, as the command line gives them) and their outputs, in input
    /// order; throws UsageError or Error as run_image_job does before it writes anything.
    std::vector<Planned> plan() const;
    /// Processes one planned file; returns its note (e.g. "threshold: 117", may be empty); throws Error naming
    /// the file. Nothing is left under `output` unless the whole file was written.
    std::string run(const std::string& input, const std::string& output) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace cli
