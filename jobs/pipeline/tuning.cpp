#include "pipeline/tuning.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "io/errors.hpp"

namespace cli {
namespace {

int parse_int(const std::string& key, const std::string& value, int low, int high) {
    std::size_t used = 0;
    int v = 0;
    try {
        v = std::stoi(value, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != value.size() || v < low || v > high)
        fail_usage("--pipeline: " + key + "=" + value + ": expected a whole number from " + std::to_string(low) +
                   " to " + std::to_string(high));
    return v;
}

void set(PipelineTuning& t, const std::string& key, const std::string& value) {
    if (key == "batch") t.batch = parse_int(key, value, 1, 1024);
    else if (key == "depth") t.depth = parse_int(key, value, 2, 16);
    else if (key == "readers") t.readers = parse_int(key, value, 1, 64);
    else if (key == "decoders") t.decoders = parse_int(key, value, 1, 8);
    else if (key == "encoders") t.encoders = parse_int(key, value, 1, 64);
    else if (key == "states") t.states = parse_int(key, value, 1, 16);
    else if (key == "writers") t.writers = parse_int(key, value, 1, 64);
    else if (key == "sync_threads") t.sync_threads = parse_int(key, value, 1, 64);
    else if (key == "pending") t.pending = static_cast<std::size_t>(parse_int(key, value, 16, 4096));
    else if (key == "sync") {
        if (value == "syncfs") t.sync = PipelineTuning::Sync::Syncfs;
        else if (value == "fdatasync") t.sync = PipelineTuning::Sync::Fdatasync;
        else fail_usage("--pipeline: sync=" + value + ": expected syncfs or fdatasync");
    } else if (key == "wait") {
        if (value == "block") t.blocking_wait = true;
        else if (value == "auto") t.blocking_wait = false;
        else fail_usage("--pipeline: wait=" + value + ": expected block or auto");
    } else if (key == "exit") {
        if (value == "fast") t.fast_exit = true;
        else if (value == "normal") t.fast_exit = false;
        else fail_usage("--pipeline: exit=" + value + ": expected fast or normal");
    } else {
        fail_usage("--pipeline: unknown key '" + key +
                   "' (keys: batch, depth, readers, decoders, encoders, states, writers, sync, sync_threads, pending, wait, exit)");
    }
}

}  // namespace

PipelineTuning parse_tuning(const std::string& spec) {
    PipelineTuning t;
    std::size_t at = 0;
    while (at < spec.size()) {
        std::size_t end = spec.find(',', at);
        if (end == std::string::npos) end = spec.size();
        const std::string pair = spec.substr(at, end - at);
        at = end + 1;
        if (pair.empty()) continue;
        const std::size_t eq = pair.find('=');
        if (eq == std::string::npos) fail_usage("--pipeline: '" + pair + "': expected key=value");
        set(t, pair.substr(0, eq), pair.substr(eq + 1));
    }
    return t;
}

namespace {
struct ProcessTuning {
    std::mutex m;
    std::string spec;
    std::optional<PipelineTuning> parsed;
};
ProcessTuning& process_tuning() {
    static ProcessTuning t;
    return t;
}
}  // namespace

void set_pipeline_spec(const std::string& spec) {
    ProcessTuning& t = process_tuning();
    std::lock_guard<std::mutex> l(t.m);
    t.spec = spec;
    t.parsed.reset();
}

PipelineTuning pipeline_tuning() {
    ProcessTuning& t = process_tuning();
    std::lock_guard<std::mutex> l(t.m);
    if (!t.parsed) t.parsed = parse_tuning(t.spec);
    return *t.parsed;
}

bool spin_wait(const PipelineTuning& t, bool gpu_ends_files, int hardware_threads, int gpus) {
    return !t.blocking_wait && gpu_ends_files && hardware_threads >= 2 * std::max(1, gpus) * (1 + t.encoders);
}

std::string describe(const PipelineTuning& t) {
    return "batch=" + std::to_string(t.batch) + ",depth=" + std::to_string(t.depth) + ",readers=" +
           std::to_string(t.readers) + ",decoders=" + std::to_string(t.decoders) + ",encoders=" +
           std::to_string(t.encoders) + ",states=" + std::to_string(t.states) + ",writers=" + std::to_string(t.writers) +
           ",sync=" + (t.sync == PipelineTuning::Sync::Syncfs ? "syncfs" : "fdatasync") +
           ",sync_threads=" + std::to_string(t.sync_threads) + ",pending=" + std::to_string(t.pending) +
           ",wait=" + (t.blocking_wait ? "block" : "auto") + ",exit=" + (t.fast_exit ? "fast" : "normal");
}

}  // namespace cli
