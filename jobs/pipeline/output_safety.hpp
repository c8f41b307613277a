// imghist_jobs — the checks a command makes on its outputs before it writes anything:
//
//   * no output is an input: compared by file identity (device and inode, following symbolic links), so a
//     path spelled differently, a symbolic link or a hard link to an input counts as that input;
//   * no two outputs are one file: compared by the folder entry they replace (the real path of the
//     existing folder, then the rest of the name), so `a/x.png` and `b/x.png` of two input folders, or
//     `photo.png` and `photo.jpg` under `--to png`, are caught before either is written.
//
// Every conflict is listed (each naming the inputs and the output); then the command fails with nothing
// written. Standard input and output ("-") never conflict.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cli {

struct InputFile;

/// The files a command reads, by identity.
class InputSet {
public:
    /// Adds an input path ("-" and paths that do not exist are ignored).
    void add(const std::string& path);
    /// Adds an input found by collect_inputs, by the identity its scan saw where it has one.
    void add(const InputFile& in);
    /// The input that `output` is (as it was added), or empty when it is none of them.
    std::string which(const std::string& output) const;

private:
    std::map<std::pair<dev_t, ino_t>, std::string> ids_;
};

/// One output a command is about to write, and the input it comes from ("" for a result of several
/// inputs, such as `hist -o FILE`).
struct PlannedOutput {
    std::string output;
    std::string input;
    /// The output may be its own input (--in-place): writing replaces it atomically.
    bool may_replace_input = false;
    /// Written by this run; false for an output planned only to find collisions (another shard's, or one
    /// --skip-existing leaves alone).
    bool written = true;
};

/// Every conflict among `outputs` and with `inputs`, one message each; empty when there is none.
std::vector<std::string> output_conflicts(const std::vector<PlannedOutput>& outputs, const InputSet& inputs);
/// Prints each conflict ("imghist: ...") and throws Error(InvalidArgument) saying nothing was written;
/// does nothing when `conflicts` is empty.
void refuse_conflicts(const std::vector<std::string>& conflicts);

}  // namespace cli
