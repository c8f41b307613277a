#include "pipeline/work_queue.hpp"

#include <algorithm>
#include <cmath>

namespace cli {

std::size_t batch_share(std::size_t left, std::size_t most, double rate, std::size_t backlog, double latency_s,
                        double others_rate, std::size_t others_backlog) {
    const std::size_t full = std::min(left, most);
    if (rate <= 0 || others_rate <= 0) return full;
    // Everyone finishes together at t: what is left and held, over the summed rate. This worker's part of
    // that is rate * t, less what it holds already.
    const double t = static_cast<double>(left + backlog + others_backlog) / (rate + others_rate);
    if (t <= latency_s) return 0;  // the others are done before a batch of ours would be
    const double share = rate * t - static_cast<double>(backlog);
    if (share <= 0) return 0;
    return std::min(full, static_cast<std::size_t>(std::ceil(share)));
}

WorkQueue::WorkQueue(std::size_t files, int cpu_workers, bool cpu_takes_files, int cores)
    : files_(files),
      cpu_workers_(std::max(1, cpu_workers)),
      cores_(cores > 0 ? cores : cpu_workers_),
      cpu_takes_files_(cpu_takes_files) {}

int WorkQueue::allowed_locked() const {
    double reserved = 0;
    for (const Batch& b : batch_) {
        if (b.starting) {
            reserved += 1;  // its set-up runs on a core
        } else if (b.active) {
            const bool ends_files = b.handed * 2 <= b.taken;  // else the CPU workers do most of its work
            reserved += std::max(std::ceil(b.host_cores - 1e-9), ends_files ? static_cast<double>(b.host_threads) : 0.0);
        }
    }
    return std::max(0, std::min(cpu_workers_, cores_ - static_cast<int>(std::ceil(reserved - 1e-9))));
}

int WorkQueue::cpu_allowed() const {
    std::lock_guard<std::mutex> l(m_);
    return allowed_locked();
}

bool WorkQueue::gpu_may_take_locked() const {
    for (const Batch& b : batch_)
        if (b.starting || b.active) return true;
    return false;
}

std::optional<WorkQueue::Taken> WorkQueue::next_for_cpu(int rank) {
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
        const int allowed = allowed_locked();
        // Files a GPU handed over: any worker the cores allow, and always one (they would wait otherwise).
        if (!handed_.empty() && rank < std::max(1, allowed)) {
            const std::size_t f = handed_.front();
            handed_.pop_front();
            return Taken{f, true};
        }
        const bool fresh_ok = cpu_takes_files_ || !gpu_may_take_locked();
        if (next_ < files_ && fresh_ok && rank < allowed) {
            ++cpu_taken_;
            const std::size_t f = next_++;
            if (next_ == files_) changed_.notify_all();  // starting GPUs give up, waiting workers end
            return Taken{f, false};
        }
        // Done when no fresh file is left for anyone and no GPU can hand over more.
        bool gpu_active = false;
        for (const Batch& b : batch_) gpu_active = gpu_active || b.active;
        if (closed_ || (next_ >= files_ && handed_.empty() && !gpu_active)) return std::nullopt;
        changed_.wait(l);
    }
}

void WorkQueue::cpu_finished(double seconds) {
    std::lock_guard<std::mutex> l(m_);
    cpu_seconds_ += seconds;
    ++cpu_files_;
    if (cpu_files_ == static_cast<std::size_t>(cpu_workers_)) changed_.notify_all();  // cpu_time_left_exceeds
}

bool WorkQueue::cpu_time_left_exceeds(double seconds) {
    std::unique_lock<std::mutex> l(m_);
    // One file per CPU worker first: the first ones finish together, so fewer would say little of the rate.
    changed_.wait(l, [&] {
        return closed_ || next_ >= files_ || cpu_files_ >= static_cast<std::size_t>(cpu_workers_);
    });
    if (closed_ || next_ >= files_) return false;
    const double per_file = cpu_seconds_ / static_cast<double>(cpu_files_);
    const std::size_t held = cpu_taken_ - cpu_files_;  // taken by the CPU workers and not finished
    return static_cast<double>(left_locked() + held) * per_file / cpu_workers_ > seconds;
}

bool WorkQueue::batch_started() const {
    std::lock_guard<std::mutex> l(m_);
    return !batch_.empty();
}

int WorkQueue::batch_starting() {
    std::lock_guard<std::mutex> l(m_);
    batch_.push_back(Batch{});
    changed_.notify_all();
    return static_cast<int>(batch_.size() - 1);
}

bool WorkQueue::batch_joined(int id) {
    std::lock_guard<std::mutex> l(m_);
    Batch& b = batch_.at(static_cast<std::size_t>(id));
    b.starting = false;
    b.active = !closed_ && next_ < files_;
    changed_.notify_all();
    return b.active;
}

void WorkQueue::batch_left(int id) {
    std::lock_guard<std::mutex> l(m_);
    Batch& b = batch_.at(static_cast<std::size_t>(id));
    b.starting = b.active = false;
    b.backlog = 0;
    changed_.notify_all();
}

std::vector<std::size_t> WorkQueue::claim(int id, std::size_t most, double rate, std::size_t backlog, double latency_s,
                                          double host_cores, int host_threads) {
    std::unique_lock<std::mutex> l(m_);
    Batch& me = batch_.at(static_cast<std::size_t>(id));
    me.rate = rate;
    me.backlog = backlog;
    me.latency_s = latency_s;
    me.host_cores = host_cores;
    me.host_threads = host_threads;
    changed_.notify_all();  // the cores it uses changed: CPU workers may stop or resume
    for (;;) {
        if (closed_ || next_ >= files_) return {};
        // The others: the CPU workers the cores allow, at their measured time per file, and the other GPUs.
        double others = 0;
        std::size_t others_backlog = 0;
        const bool cpu_counts = cpu_takes_files_ && cpu_files_ > 0 && cpu_seconds_ > 0;
        if (cpu_counts) others += allowed_locked() / (cpu_seconds_ / static_cast<double>(cpu_files_));
        for (std::size_t k = 0; k < batch_.size(); ++k)
            if (static_cast<int>(k) != id && batch_[k].active) {
                others += batch_[k].rate;
                others_backlog += batch_[k].backlog;
            }
        const std::size_t n = batch_share(left_locked(), most, rate, backlog, latency_s, others, others_backlog);
        if (n > 0) {
            std::vector<std::size_t> out(n);
            for (std::size_t k = 0; k < n; ++k) out[k] = next_++;
            me.taken += n;
            me.backlog += n;
            if (next_ == files_) changed_.notify_all();
            return out;
        }
        // Not now: the others finish sooner; look again when anything changes (or the rates move).
        changed_.wait_for(l, std::chrono::milliseconds(5));
    }
}

void WorkQueue::hand_to_cpu(std::size_t file, int from) {
    std::lock_guard<std::mutex> l(m_);
    if (from >= 0) ++batch_.at(static_cast<std::size_t>(from)).handed;
    handed_.push_back(file);
    changed_.notify_all();
}

bool WorkQueue::files_left() const {
    std::lock_guard<std::mutex> l(m_);
    return !closed_ && next_ < files_;
}

void WorkQueue::close() {
    std::lock_guard<std::mutex> l(m_);
    closed_ = true;
    changed_.notify_all();
}

std::size_t WorkQueue::cpu_taken() const {
    std::lock_guard<std::mutex> l(m_);
    return cpu_taken_;
}

std::size_t WorkQueue::batch_taken(int id) const {
    std::lock_guard<std::mutex> l(m_);
    return batch_.at(static_cast<std::size_t>(id)).taken;
}

}  // namespace cli
