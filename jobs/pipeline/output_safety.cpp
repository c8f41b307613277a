#include "pipeline/output_safety.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "io/errors.hpp"
#include "io/fileio.hpp"
#include "pipeline/pipeline.hpp"

namespace cli {

void InputSet::add(const std::string& path) {
    struct stat st {};
    if (path == "-" || stat(path.c_str(), &st) != 0) return;
    ids_.emplace(std::make_pair(st.st_dev, st.st_ino), path);
}

void InputSet::add(const InputFile& in) {
    if (in.known) ids_.emplace(std::make_pair(in.dev, in.ino), in.path);
    else add(in.path);
}

std::string InputSet::which(const std::string& output) const {
    struct stat st {};
    if (output == "-" || ids_.empty() || stat(output.c_str(), &st) != 0) return {};
    auto it = ids_.find(std::make_pair(st.st_dev, st.st_ino));
    return it == ids_.end() ? std::string() : it->second;
}

namespace {

std::string base_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// The folder entry a write to `path` replaces: the real path of the nearest existing folder, then the
/// rest of the name as written (folders the run will create). Two outputs with one key are one file.
class EntryKeys {
public:
    std::string key(const std::string& path) {
        const std::string dir = parent_dir(path);
        return folder(dir, path) + "/" + base_of(path);
    }

private:
    std::string folder(const std::string& dir, const std::string& path) {
        auto hit = cache_.find(dir);
        if (hit != cache_.end()) return hit->second;
        std::string real;
        if (char* r = realpath(dir.c_str(), nullptr)) {
            real = r;
            std::free(r);
        } else if (dir == path || dir == "." || dir == "/") {
            real = dir;
        } else {
            real = key(dir);
        }
        return cache_[dir] = real;
    }
    std::unordered_map<std::string, std::string> cache_;
};

}  // namespace

std::vector<std::string> output_conflicts(const std::vector<PlannedOutput>& outputs, const InputSet& inputs) {
    std::vector<std::string> conflicts;
    EntryKeys keys;
    std::unordered_map<std::string, const PlannedOutput*> first;
    // An output in a folder that does not exist yet (a fresh output folder) is no input: one look per folder.
    std::unordered_map<std::string, bool> folder_exists;
    auto may_exist = [&](const std::string& output) {
        const std::string dir = parent_dir(output);
        auto it = folder_exists.find(dir);
        if (it == folder_exists.end()) it = folder_exists.emplace(dir, is_directory(dir)).first;
        return it->second;
    };
    for (const PlannedOutput& o : outputs) {
        if (o.output == "-") continue;
        auto [at, fresh] = first.emplace(keys.key(o.output), &o);
        if (!fresh) {
            conflicts.push_back(at->second->input + " and " + o.input + " would both be written to " + o.output +
                                " (the second would replace the first); rename one of them or choose another output");
            continue;
        }
        const std::string in = o.written && may_exist(o.output) ? inputs.which(o.output) : std::string();
        if (in.empty()) continue;
        if (in == o.input || same_file(in, o.input)) {
            if (!o.may_replace_input)
                conflicts.push_back(o.input + ": the output " + o.output +
                                    " is the input file; refusing to overwrite it (use --in-place)");
        } else {
            conflicts.push_back(o.input + ": the output " + o.output + " is the input " + in +
                                "; refusing to overwrite it");
        }
    }
    return conflicts;
}

void refuse_conflicts(const std::vector<std::string>& conflicts) {
    if (conflicts.empty()) return;
    if (conflicts.size() == 1) fail(ErrorCode::InvalidArgument, "", conflicts[0] + "; nothing written");
    constexpr std::size_t kShown = 20;
    for (std::size_t i = 0; i < conflicts.size() && i < kShown; ++i)
        std::fprintf(stderr, "imghist: %s\n", conflicts[i].c_str());
    if (conflicts.size() > kShown) std::fprintf(stderr, "imghist: ... and %zu more\n", conflicts.size() - kShown);
    fail(ErrorCode::InvalidArgument, "",
         std::to_string(conflicts.size()) + " outputs would overwrite inputs or each other; nothing written");
}

}  // namespace cli
