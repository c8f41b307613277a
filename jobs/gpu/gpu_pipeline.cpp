#include "gpu/gpu_pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>

#include "gpu/jpeg_encoder.hpp"
#include "imghist/batch_filters.hpp"
#include "io/errors.hpp"
#include "io/parallel.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/trace.hpp"

namespace cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

/// A closable bounded FIFO between two stages.
template <class T>
class Channel {
public:
    explicit Channel(std::size_t capacity) : cap_(std::max<std::size_t>(1, capacity)) {}
    /// False when closed.
    bool push(T v) {
        std::unique_lock<std::mutex> l(m_);
        not_full_.wait(l, [&] { return q_.size() < cap_ || closed_; });
        if (closed_) return false;
        q_.push_back(std::move(v));
        not_empty_.notify_one();
        return true;
    }
    /// Waits for one; nullopt once closed and empty.
    std::optional<T> pop() {
        std::unique_lock<std::mutex> l(m_);
        not_empty_.wait(l, [&] { return !q_.empty() || closed_; });
        if (q_.empty()) return std::nullopt;
        T v = std::move(q_.front());
        q_.pop_front();
        not_full_.notify_one();
        return v;
    }
    /// Waits for one, then takes up to `most` of those queued; empty once closed and empty.
    std::vector<T> pop_some(std::size_t most) {
        std::unique_lock<std::mutex> l(m_);
        not_empty_.wait(l, [&] { return !q_.empty() || closed_; });
        std::vector<T> out;
        while (!q_.empty() && out.size() < most) {
            out.push_back(std::move(q_.front()));
            q_.pop_front();
        }
        not_full_.notify_all();
        return out;
    }
    void close() {
        std::lock_guard<std::mutex> l(m_);
        closed_ = true;
        not_empty_.notify_all();
        not_full_.notify_all();
    }

private:
    const std::size_t cap_;
    std::mutex m_;
    std::condition_variable not_empty_, not_full_;
    std::deque<T> q_;
    bool closed_ = false;
};

/// Adds a thread's CPU time to a total, at every tick() and at its end (host_cores of BatchStats).
class CpuMeter {
public:
    explicit CpuMeter(std::atomic<std::int64_t>& total) : total_(total), last_(thread_cpu_seconds()) {}
    ~CpuMeter() { tick(); }
    void tick() {
        const double now = thread_cpu_seconds();
        total_.fetch_add(static_cast<std::int64_t>((now - last_) * 1e9));
        last_ = now;
    }

private:
    std::atomic<std::int64_t>& total_;
    double last_;
};

/// One of the GPU's batches in flight: its items, the device buffers they decode into, and its events.
struct Batch {
    std::size_t serial = 0;  // for the trace
    DecodedBatch slots;
    nv::Event start = nullptr, decoded = nullptr, ready = nullptr;
    bool timed = false;  // the events were recorded
    std::vector<Item*> items;
    std::vector<std::size_t> item_slot;  // items[k] decoded into slot item_slot[k]
    std::atomic<int> pending{0};         // tasks not finished (+1 while the decoder hands them out)
    std::size_t claimed = 0;
    Clock::time_point claimed_at;
    double read_ms = 0, decode_host_ms = 0;
    std::string decode_trace;
};

struct Task {
    enum Kind : std::uint8_t { Encode, Download, Count } kind = Encode;
    Batch* batch = nullptr;
    Item* item = nullptr;  // Encode, Download
    std::size_t slot = 0;
    int quality = 0;  // Encode
};

class GpuPipeline final : public BatchWorker {
public:
    GpuPipeline(const Device& d, std::shared_ptr<const GpuJob> job, const PipelineTuning& t)
        : d_(d), job_(std::move(job)), t_(t), name_("cuda:" + std::to_string(d.ordinal)),
          free_(static_cast<std::size_t>(t.depth)), decode_q_(static_cast<std::size_t>(t.depth)),
          tasks_(static_cast<std::size_t>(t.depth) * static_cast<std::size_t>(t.batch)),
          write_q_(static_cast<std::size_t>(t.batch) * 2) {}

    std::string name() const override { return name_; }
    bool start(const std::function<bool()>& wanted, std::string& why) override;
    void run(RunAccess& run) override;
    std::vector<std::string> summary() const override;

private:
    void reader(RunAccess& run);
    void decoder(RunAccess& run);
    void decode_batch(RunAccess& run, Batch& b);
    /// The decoded items' next step: tasks for the finishers.
    void hand_out(RunAccess& run, Batch& b, const std::vector<GpuJob::Action>& actions);
    void finisher(RunAccess& run, std::size_t t);
    /// One finisher round's tasks and what becomes of each.
    struct Round {
        explicit Round(std::vector<Task>& t) : tasks(t), state(t.size(), -1), to_cpu(t.size(), false) {}
        std::vector<Task>& tasks;
        std::vector<int> state;                     // an RGB image's nvJPEG encoder state, -1: none
        std::vector<bool> to_cpu;                   // handed to the CPU workers
        std::vector<GpuJpegEncoder::Input> planar;  // the planar images, encoded together
        std::vector<std::size_t> planar_task;       // their tasks
        bool downloads = false;
        std::size_t images = 0;                     // for the device clock
    };
    void finish_tasks(RunAccess& run, std::size_t t, std::vector<Task>& tasks, StageTimer& timer);
    /// Enqueues the round's work on finisher t's stream (counts, RGB encodes, downloads) and lists its planar
    /// images.
    void enqueue_round(RunAccess& run, std::size_t t, Round& r, nv::Event round_start);
    /// Encodes the round's planar images in one call; on a device failure hands them to the CPU workers.
    void encode_planar(RunAccess& run, std::size_t t, Round& r);
    /// Hands each item of the round on: to the writers, the CPU workers or its end.
    void collect_round(RunAccess& run, std::size_t t, Round& r, StageTimer& timer);
    /// Counts a batch's images on finisher t's stream; returns how many it counted.
    std::size_t count_task(RunAccess& run, std::size_t t, Task& task);
    void writer(RunAccess& run);
    /// An item leaves this GPU's hands (it ended, or another worker has it now).
    void ended(std::size_t n = 1) { ended_.fetch_add(n); }
    void task_done(Batch& b);
    void release(Batch& b);
    BatchStats stats() const;
    int finishers() const noexcept { return static_cast<int>(finisher_streams_.size()); }
    int writers() const noexcept { return job_->encodes ? t_.writers : 0; }
    /// Every thread the run starts for this GPU (the work queue keeps a core for each).
    int host_threads() const noexcept { return t_.readers + 1 + finishers() + writers(); }

    const Device d_;
    const std::shared_ptr<const GpuJob> job_;
    const PipelineTuning t_;
    std::string name_;
    GpuDevice* dev_ = nullptr;
    nv::Stream stream_ = nullptr;  // decoding and the device operation
    std::unique_ptr<GpuDecoder> decoder_;
    std::vector<std::unique_ptr<GpuEncoder>> encoders_;             // nvJPEG's, per finisher (RGB images)
    std::vector<std::unique_ptr<GpuJpegEncoder>> planar_encoders_;  // per finisher (planar images)
    std::vector<nv::Stream> finisher_streams_;
    std::vector<std::pair<nv::Event, nv::Event>> finisher_events_;  // around each finisher round's device work
    std::vector<std::unique_ptr<Batch>> batches_;
    Channel<Batch*> free_, decode_q_;
    Channel<Task> tasks_;
    Channel<Item*> write_q_;

    Clock::time_point started_, ready_, ended_at_;
    std::atomic<std::size_t> claimed_{0}, ended_{0}, batches_done_{0}, serial_{0};
    std::atomic<std::int64_t> cpu_ns_{0};
    std::atomic<Clock::rep> first_claim_{0};  // time_since_epoch of the first claim; 0: none yet
    mutable std::mutex latency_m_;
    double latency_s_ = 0;
    std::string setup_;  // start-up steps, for the trace
    StageClock read_{"read", 0}, decode_{"decode", 1}, device_decode_{"decoder (GPU)", 1},
        device_op_{"operation (GPU)", 1}, finish_{"encode", 0}, device_finish_{"encoder (GPU)", 0}, write_{"write", 0};
};

bool GpuPipeline::start(const std::function<bool()>& wanted, std::string& why) {
    started_ = Clock::now();
    if (!wanted()) {
        why = "not needed";
        return false;
    }
    // The context; the host's every GPU counts as one that may run beside this one (all, auto).
    dev_ = &GpuDevice::get(d_.ordinal,
                           spin_wait(t_, job_->ends_files(), hardware_threads(), imghist::cuda_device_count()));
    name_ = describe(d_);
    const double context_ms = ms_between(started_, Clock::now());
    dev_->start_hardware(t_.batch, job_->warm_format, t_.decoders);
    // Meanwhile the stream and the library's workspace on it (the first batch-filter call makes it).
    stream_ = dev_->new_stream();
    if (job_->operate) {
        imghist::DeviceBuffer tiny(64 * 64);
        tiny.fill_zero(stream_);
        const imghist::ImageView v = imghist::ImageView::device(tiny.data(), 64, 64);
        imghist::FilterOptions fo;
        fo.backend = imghist::Backend::Cuda;
        fo.device = d_.ordinal;
        fo.stream = stream_;
        job_->operate({v}, {}, fo);
        dev_->cu().StreamSynchronize(stream_);
    }
    bool abandoned = false;
    dev_->hardware(wanted, &abandoned);
    if (abandoned) {
        why = "not needed";
        return false;
    }
    const double hardware_ms = ms_between(started_, Clock::now());
    decoder_ = std::make_unique<GpuDecoder>(*dev_, t_.decoders);
    for (int k = 0; k < t_.depth; ++k) {
        auto b = std::make_unique<Batch>();
        b->start = dev_->new_event(true);
        b->decoded = dev_->new_event(true);
        b->ready = dev_->new_event(true);
        free_.push(b.get());
        batches_.push_back(std::move(b));
    }
    // The encoders after the hardware decoder: made side by side, the two contended in the driver (H100: the
    // decoder ready 0.3 s later). nvJPEG's: each state's first encode allocates, so each is warmed now, on
    // the finishers' threads at once (about 0.1 s). The batch encoders: their first call loads their kernels.
    if (job_->encodes_rgb) {
        encoders_.resize(static_cast<std::size_t>(t_.encoders));
        std::vector<std::string> errors(encoders_.size());
        std::vector<std::thread> warm;
        for (std::size_t k = 0; k < encoders_.size(); ++k)
            warm.emplace_back([&, k] {
                try {
                    dev_->make_current();
                    encoders_[k] = std::make_unique<GpuEncoder>(*dev_, t_.states);
                    encoders_[k]->warm_up();
                } catch (const std::exception& e) {
                    errors[k] = user_message(e);
                }
            });
        for (auto& th : warm) th.join();
        for (const std::string& e : errors)
            if (!e.empty()) throw Error(ErrorCode::Cuda, "encoder set-up: " + e);
        for (auto& e : encoders_) finisher_streams_.push_back(e->stream());
    } else {
        for (int k = 0; k < t_.encoders; ++k) finisher_streams_.push_back(dev_->new_stream());
    }
    if (job_->encodes && !job_->encodes_rgb) {
        dev_->make_current();
        for (const nv::Stream s : finisher_streams_) {
            planar_encoders_.push_back(std::make_unique<GpuJpegEncoder>(dev_->cu(), s));
            planar_encoders_.back()->warm_up(s);
        }
    }
    for (std::size_t k = 0; k < finisher_streams_.size(); ++k)
        finisher_events_.emplace_back(dev_->new_event(true), dev_->new_event(true));
    ready_ = Clock::now();
    char line[256];
    std::snprintf(line, sizeof line, "ready after %.1f ms (context %.1f ms, hardware decoder %s at %.1f ms, %s %.1f ms)",
                  ms_between(started_, ready_), context_ms, dev_->hardware() ? "ready" : "absent", hardware_ms,
                  job_->encodes ? "encoders ready" : "streams", ms_between(started_, ready_) - hardware_ms);
    setup_ = line;
    trace_line(name_ + ": " + setup_);
    return true;
}

BatchStats GpuPipeline::stats() const {
    BatchStats s;
    const auto now = Clock::now();
    const std::size_t done = ended_.load();
    const Clock::rep first = first_claim_.load();
    if (done > 0 && first != 0) {
        const double secs = ms_between(Clock::time_point(Clock::duration(first)), now) / 1e3;
        s.rate = secs > 0 ? static_cast<double>(done) / secs : 0;
    }
    s.backlog = claimed_.load() - done;
    {
        std::lock_guard<std::mutex> l(latency_m_);
        s.latency_s = latency_s_;
    }
    const double wall = ms_between(ready_, now) / 1e3;
    s.host_cores = wall > 0.05 ? static_cast<double>(cpu_ns_.load()) / 1e9 / wall : 0;
    s.host_threads = host_threads();
    return s;
}

void GpuPipeline::run(RunAccess& run) {
    ready_ = Clock::now();
    std::vector<std::thread> reading, finishing, writing;
    const std::string gpu = "ih:g" + std::to_string(d_.ordinal) + "-";
    for (int k = 0; k < t_.readers; ++k)
        reading.emplace_back([&] {
            name_this_thread(gpu + "read");
            reader(run);
        });
    std::thread decoding([&] {
        name_this_thread(gpu + "decode");
        decoder(run);
    });
    for (int k = 0; k < finishers(); ++k)
        finishing.emplace_back([&, k] {
            name_this_thread(gpu + "finish" + std::to_string(k));
            finisher(run, static_cast<std::size_t>(k));
        });
    for (int k = 0; k < writers(); ++k)
        writing.emplace_back([&] {
            name_this_thread(gpu + "write");
            writer(run);
        });
    for (auto& th : reading) th.join();
    decode_q_.close();
    decoding.join();
    tasks_.close();
    for (auto& th : finishing) th.join();
    write_q_.close();
    for (auto& th : writing) th.join();
    ended_at_ = Clock::now();
}

void GpuPipeline::reader(RunAccess& run) {
    CpuMeter cpu(cpu_ns_);
    StageTimer timer(read_, StageClock::WaitOut);
    for (;;) {
        const std::optional<Batch*> got = free_.pop();  // waiting for room: a free batch slot
        if (!got) break;
        Batch& b = **got;
        timer.to(StageClock::WaitIn);
        const std::vector<Item*> claimed = run.claim(static_cast<std::size_t>(t_.batch), stats());
        if (claimed.empty()) {
            free_.push(&b);
            break;
        }
        timer.to(StageClock::Busy);
        Clock::rep none = 0;
        first_claim_.compare_exchange_strong(none, Clock::now().time_since_epoch().count());
        claimed_.fetch_add(claimed.size());
        b.claimed_at = Clock::now();
        b.claimed = claimed.size();
        b.items.clear();
        for (Item* it : claimed) {
            if (!run.load(*it)) {
                ended();
                continue;
            }
            if (!it->gpu || job_->action(*it) == GpuJob::Action::Cpu) {
                run.to_cpu(*it);
                ended();
                continue;
            }
            b.items.push_back(it);
        }
        read_.add_count(claimed.size());
        b.read_ms = ms_between(b.claimed_at, Clock::now());
        cpu.tick();
        timer.to(StageClock::WaitOut);
        if (b.items.empty()) {
            free_.push(&b);
            continue;
        }
        b.serial = ++serial_;
        decode_q_.push(&b);
    }
}

void GpuPipeline::decoder(RunAccess& run) {
    CpuMeter cpu(cpu_ns_);
    StageTimer timer(decode_);
    while (const std::optional<Batch*> b = decode_q_.pop()) {
        timer.to(StageClock::Busy);
        decode_batch(run, **b);
        decode_.add_count(1);
        cpu.tick();
        timer.to(StageClock::WaitIn);
    }
}

void GpuPipeline::decode_batch(RunAccess& run, Batch& b) {
    const auto t0 = Clock::now();
    dev_->make_current();
    const nv::DriverApi& cu = dev_->cu();
    // Each item's slot: the stored planes first (their Y planes lie one after the other), then RGB.
    std::vector<Item*> planar, rgb;
    std::vector<DecodedBatch::Shape> planar_shapes, rgb_shapes;
    for (Item* it : b.items) {
        const GpuJob::Action a = job_->action(*it);
        const bool planes = a == GpuJob::Action::EncodePlanar || a == GpuJob::Action::Count;
        DecodedBatch::Shape shape;
        if (!GpuDecoder::shape_of(it->jpeg_header, planes ? nv::kOutputYUV : nv::kOutputRGBI, shape)) {
            run.to_cpu(*it);  // a sampling nvJPEG does not take: its bytes go to the CPU decoder
            ended();
            continue;
        }
        try {
            checked_image_bytes(static_cast<std::uint64_t>(shape.width), static_cast<std::uint64_t>(shape.height), 3, 8,
                                job_->decode, display_name(it->input.path));
            check_jpeg_scans(it->jpeg_header.scans, job_->decode.limits, display_name(it->input.path));
        } catch (const std::exception& e) {
            it->error = file_message(display_name(it->input.path), e);
            run.finish(*it);
            ended();
            continue;
        }
        (planes ? planar : rgb).push_back(it);
        (planes ? planar_shapes : rgb_shapes).push_back(shape);
    }
    std::vector<DecodedBatch::Shape> shapes = planar_shapes;
    shapes.insert(shapes.end(), rgb_shapes.begin(), rgb_shapes.end());
    b.items = planar;
    b.items.insert(b.items.end(), rgb.begin(), rgb.end());
    b.item_slot.resize(b.items.size());
    for (std::size_t k = 0; k < b.items.size(); ++k) b.item_slot[k] = k;
    std::vector<GpuJob::Action> actions;
    if (!b.items.empty()) {
        b.slots.layout(shapes);
        cu.EventRecord(b.start, stream_);
        std::vector<std::size_t> planar_slots(planar.size()), rgb_slots(rgb.size());
        for (std::size_t k = 0; k < planar.size(); ++k) planar_slots[k] = k;
        for (std::size_t k = 0; k < rgb.size(); ++k) rgb_slots[k] = planar.size() + k;
        std::vector<GpuDecoder::Outcome> outcomes = decoder_->decode(planar, planar_slots, nv::kOutputYUV, b.slots, stream_);
        b.decode_trace = decoder_->last_trace();
        const std::vector<GpuDecoder::Outcome> more = decoder_->decode(rgb, rgb_slots, nv::kOutputRGBI, b.slots, stream_);
        b.decode_trace += decoder_->last_trace();
        outcomes.insert(outcomes.end(), more.begin(), more.end());
        cu.EventRecord(b.decoded, stream_);
        // Failed and declined images leave the batch here; the rest keep their slots.
        std::vector<Item*> kept;
        std::vector<std::size_t> kept_slot;
        for (std::size_t k = 0; k < b.items.size(); ++k) {
            Item* it = b.items[k];
            if (outcomes[k] == GpuDecoder::Outcome::Decoded) {
                kept.push_back(it);
                kept_slot.push_back(k);
                actions.push_back(job_->action(*it));
                continue;
            }
            if (outcomes[k] == GpuDecoder::Outcome::Declined) run.to_cpu(*it);
            else run.finish(*it);
            ended();
        }
        b.items = kept;
        b.item_slot = kept_slot;
        // The command's device operation: one call for the whole batch.
        std::vector<imghist::ImageView> luma, colour;
        for (std::size_t k = 0; k < b.items.size(); ++k) {
            if (actions[k] == GpuJob::Action::EncodePlanar) luma.push_back(b.slots.view(b.item_slot[k], 0));
            if (actions[k] == GpuJob::Action::EncodeRgb) colour.push_back(b.slots.view(b.item_slot[k]));
        }
        if (job_->operate && (!luma.empty() || !colour.empty())) {
            imghist::FilterOptions fo;
            fo.backend = imghist::Backend::Cuda;
            fo.device = d_.ordinal;
            fo.stream = stream_;
            try {
                job_->operate(luma, colour, fo);
            } catch (const std::exception& e) {
                // The device failed as a whole (out of memory, a driver error): these files go through the CPU
                // codecs instead, as in a CPU run (their bytes are still here).
                for (Item* it : b.items) run.to_cpu(*it);
                ended(b.items.size());
                trace_line(name_ + ": batch " + std::to_string(b.serial) + " failed on the device (" + user_message(e) +
                           "); its files go to the CPU workers");
                b.items.clear();
                b.item_slot.clear();
                actions.clear();
            }
        }
        cu.EventRecord(b.ready, stream_);
        b.timed = true;
    }
    b.decode_host_ms = ms_between(t0, Clock::now());
    hand_out(run, b, actions);
}

void GpuPipeline::hand_out(RunAccess& run, Batch& b, const std::vector<GpuJob::Action>& actions) {
    (void)run;
    std::vector<Task> tasks;
    bool counted = false;
    for (std::size_t k = 0; k < b.items.size(); ++k) {
        Item* it = b.items[k];
        Task t;
        t.batch = &b;
        t.item = it;
        t.slot = b.item_slot[k];
        switch (actions[k]) {
            case GpuJob::Action::EncodePlanar:
            case GpuJob::Action::EncodeRgb: {
                t.kind = Task::Encode;
                t.quality = jpeg_quality_for(job_->encode, it->jpeg_header.meta);
                tasks.push_back(t);
                break;
            }
            case GpuJob::Action::Download:
                t.kind = Task::Download;
                tasks.push_back(t);
                break;
            case GpuJob::Action::Count:
                if (!counted) {  // one task counts all of the batch's images
                    t.kind = Task::Count;
                    t.item = nullptr;
                    tasks.push_back(t);
                    counted = true;
                }
                break;
            case GpuJob::Action::Cpu: break;
        }
    }
    b.pending = static_cast<int>(tasks.size()) + 1;  // + the hand-out itself
    for (Task& t : tasks) tasks_.push(t);
    task_done(b);
}

void GpuPipeline::task_done(Batch& b) {
    if (--b.pending == 0) release(b);
}

void GpuPipeline::release(Batch& b) {
    const auto now = Clock::now();
    const double latency = ms_between(b.claimed_at, now);
    float decode_ms = 0, op_ms = 0;
    if (b.timed) {
        const nv::DriverApi& cu = dev_->cu();
        cu.EventSynchronize(b.ready);
        cu.EventElapsedTime(&decode_ms, b.start, b.decoded);
        cu.EventElapsedTime(&op_ms, b.decoded, b.ready);
        device_decode_.add(StageClock::Busy, decode_ms);
        device_op_.add(StageClock::Busy, op_ms);
        device_decode_.add_count(b.items.size());
        if (job_->operate) device_op_.add_count(b.items.size());
        b.timed = false;
    }
    {
        std::lock_guard<std::mutex> l(latency_m_);
        // A moving average: the end-of-run rule needs the current latency, not the first batches'.
        latency_s_ = latency_s_ == 0 ? latency / 1e3 : 0.7 * latency_s_ + 0.3 * latency / 1e3;
    }
    ++batches_done_;
    if (tracing()) {
        char line[512];
        std::snprintf(line, sizeof line,
                      "%s batch %zu: %zu files claimed, %zu on the GPU; read %.1f ms; decode host %.1f ms (%s), GPU "
                      "%.2f ms; operation GPU %.3f ms; claim to last image %.1f ms",
                      name_.c_str(), b.serial, b.claimed, b.items.size(), b.read_ms, b.decode_host_ms,
                      b.decode_trace.c_str(), decode_ms, op_ms, latency);
        trace_line(line);
    }
    b.items.clear();
    free_.push(&b);
}

void GpuPipeline::finisher(RunAccess& run, std::size_t t) {
    CpuMeter cpu(cpu_ns_);
    StageTimer timer(finish_);
    // A round: nvJPEG's states' worth of RGB images, or a share of a batch for the batch encoder.
    const std::size_t round = !encoders_.empty() ? static_cast<std::size_t>(encoders_[t]->states())
                              : !planar_encoders_.empty() ? static_cast<std::size_t>(std::max(1, t_.batch / finishers()))
                                                          : 1;
    for (;;) {
        std::vector<Task> tasks = tasks_.pop_some(round);
        if (tasks.empty()) break;
        timer.to(StageClock::Busy);
        dev_->make_current();
        finish_tasks(run, t, tasks, timer);
        cpu.tick();
        timer.to(StageClock::WaitIn);
    }
}

namespace {

void fail_task(Task& task, const std::string& why) {
    task.item->error = display_name(task.item->output, true) + ": " + why;
}

}  // namespace

void GpuPipeline::finish_tasks(RunAccess& run, std::size_t t, std::vector<Task>& tasks, StageTimer& timer) {
    const nv::DriverApi& cu = dev_->cu();
    const nv::Stream s = finisher_streams_[t];
    Round r(tasks);
    // The round's device time runs from the point where its first batch is ready (it includes the wait for a
    // second one).
    const auto [round_start, round_end] = finisher_events_[t];
    enqueue_round(run, t, r, round_start);
    encode_planar(run, t, r);
    cu.EventRecord(round_end, s);
    if (r.downloads && cu.StreamSynchronize(s) != 0)
        for (Task& task : tasks)
            if (task.kind == Task::Download && task.item->error.empty())
                task.item->error = display_name(task.item->input.path) + ": copying the decoded image back failed";
    collect_round(run, t, r, timer);
    // Complete by now where anything ran (each collection, download and count waited for the stream).
    float device_ms = 0;
    if (r.images > 0 && cu.EventSynchronize(round_end) == 0 &&
        cu.EventElapsedTime(&device_ms, round_start, round_end) == 0)
        device_finish_.add(StageClock::Busy, device_ms);
    device_finish_.add_count(r.images);
}

void GpuPipeline::enqueue_round(RunAccess& run, std::size_t t, Round& r, nv::Event round_start) {
    const nv::DriverApi& cu = dev_->cu();
    const nv::Stream s = finisher_streams_[t];
    GpuEncoder* enc = encoders_.empty() ? nullptr : encoders_[t].get();
    // This stream waits on the device for each batch's images, the host does not.
    Batch* waited = nullptr;
    int next_state = 0;
    for (std::size_t i = 0; i < r.tasks.size(); ++i) {
        Task& task = r.tasks[i];
        if (task.batch != waited) {
            cu.StreamWaitEvent(s, task.batch->ready, 0);
            if (!waited) cu.EventRecord(round_start, s);
            waited = task.batch;
        }
        if (task.kind == Task::Count) {
            r.images += count_task(run, t, task);
            continue;
        }
        const GpuDecoded& d = task.batch->slots[task.slot];
        if (task.kind == Task::Encode && d.format == nv::kOutputYUV && !d.exact) {
            // Planes another backend decoded (a batch the hardware decoder failed on, a GPU without it): the
            // CPU path encodes the file, so that every output is its bytes (the file's bytes are still here).
            run.to_cpu(*task.item);
            r.to_cpu[i] = true;
        } else if (task.kind == Task::Encode && d.format == nv::kOutputYUV) {
            r.planar.push_back(GpuJpegEncoder::Input{&d, task.quality, task.item->jpeg.size()});
            r.planar_task.push_back(i);
            ++r.images;
        } else if (task.kind == Task::Encode && !enc) {
            fail_task(task, "cannot encode JPEG on the GPU: no encoder for interleaved images");
        } else if (task.kind == Task::Encode) {
            try {
                const nv::Status st = enc->enqueue(next_state, d, task.quality);
                if (st == nv::kSuccess) r.state[i] = next_state++;
                else fail_task(task, std::string("cannot encode JPEG on the GPU (") + nv::status_name(st) + ")");
            } catch (const std::exception& e) {
                fail_task(task, "cannot encode JPEG on the GPU: " + user_message(e));
            }
            if (r.state[i] >= 0) ++r.images;
        } else {
            Item& it = *task.item;
            try {
                it.image = Image(d.width, d.height, 3, 8);
                task.batch->slots.download(task.slot, it.image.data(), cu, s);
                r.downloads = true;
                ++r.images;
            } catch (const std::exception& e) {
                it.error = file_message(display_name(it.input.path), e);
            }
        }
    }
}

void GpuPipeline::encode_planar(RunAccess& run, std::size_t t, Round& r) {
    if (r.planar.empty()) return;
    std::vector<Bytes> files;
    try {
        planar_encoders_.at(t)->encode(r.planar, finisher_streams_[t], files);
        for (std::size_t j = 0; j < files.size(); ++j) r.tasks[r.planar_task[j]].item->encoded = std::move(files[j]);
    } catch (const std::exception& e) {
        // The device failed (out of memory, a driver error): these files go through the CPU codecs instead, as
        // in a CPU run (their bytes are still here).
        for (std::size_t i : r.planar_task) {
            run.to_cpu(*r.tasks[i].item);
            r.to_cpu[i] = true;
        }
        trace_line(name_ + ": encoding failed on the device (" + user_message(e) + "); " +
                   std::to_string(r.planar_task.size()) + " files go to the CPU workers");
    }
}

void GpuPipeline::collect_round(RunAccess& run, std::size_t t, Round& r, StageTimer& timer) {
    GpuEncoder* enc = encoders_.empty() ? nullptr : encoders_[t].get();
    for (std::size_t i = 0; i < r.tasks.size(); ++i) {
        Task& task = r.tasks[i];
        if (task.kind == Task::Count || r.to_cpu[i]) {  // counted, or the CPU workers have it now
            if (r.to_cpu[i]) ended();
            task_done(*task.batch);
            continue;
        }
        Item& it = *task.item;
        if (task.kind == Task::Encode && r.state[i] >= 0) {
            const nv::Status st = enc->retrieve(r.state[i], it.encoded);
            if (st != nv::kSuccess) {
                it.encoded.clear();
                fail_task(task, std::string("cannot encode JPEG on the GPU (") + nv::status_name(st) + ")");
            }
        }
        finish_.add_count(1);
        if (!it.error.empty()) {
            run.finish(it);
            ended();
        } else if (task.kind == Task::Download) {
            it.image.meta = it.jpeg_header.meta;  // as decode_jpeg fills it: the CPU encoder writes it back
            it.jpeg = Bytes();                    // decoded: nothing left for the CPU decoder
            run.to_cpu(it);
            ended();
        } else {
            it.jpeg = Bytes();
            it.worker = name_;
            it.stage_ms.emplace_back("decode+operation+encode (batch)", ms_between(task.batch->claimed_at, Clock::now()));
            timer.to(StageClock::WaitOut);  // the writers are behind
            write_q_.push(&it);
            timer.to(StageClock::Busy);
        }
        task_done(*task.batch);
    }
}

std::size_t GpuPipeline::count_task(RunAccess& run, std::size_t t, Task& task) {
    Batch& b = *task.batch;
    std::vector<Item*> items;
    std::vector<imghist::YCbCrPlanes> planes;
    for (std::size_t k = 0; k < b.items.size(); ++k) {
        if (job_->action(*b.items[k]) != GpuJob::Action::Count) continue;
        const std::size_t slot = b.item_slot[k];
        const GpuDecoded& d = b.slots[slot];
        imghist::YCbCrPlanes p;
        // 4:4:0, 4:1:1, 4:1:0: libjpeg-turbo's upsampling of them is not counted here.
        if (!(d.subsampling == nv::kCss444 || d.subsampling == nv::kCss422 || d.subsampling == nv::kCss420) ||
            !luma_sampling(d.subsampling, p.chroma_x, p.chroma_y)) {
            run.to_cpu(*b.items[k]);
            ended();
            continue;
        }
        p.y = b.slots.view(slot, 0);
        p.cb = b.slots.view(slot, 1);
        p.cr = b.slots.view(slot, 2);
        planes.push_back(p);
        items.push_back(b.items[k]);
    }
    if (items.empty()) return 0;
    imghist::Options o;
    o.backend = imghist::Backend::Cuda;
    o.device = d_.ordinal;
    o.stream = finisher_streams_[t];
    try {
        job_->count(items, planes, o);
    } catch (const std::exception& e) {
        for (Item* it : items) it->error = file_message(display_name(it->input.path), e);
    }
    for (Item* it : items) {
        it->jpeg = Bytes();
        it->worker = name_;
        it->stage_ms.emplace_back("decode+count (batch)", ms_between(b.claimed_at, Clock::now()));
        finish_.add_count(1);
        run.finish(*it);
        ended();
    }
    return items.size();
}

void GpuPipeline::writer(RunAccess& run) {
    CpuMeter cpu(cpu_ns_);
    StageTimer timer(write_);
    while (const std::optional<Item*> it = write_q_.pop()) {
        timer.to(StageClock::Busy);
        run.store(**it);
        ended();
        write_.add_count(1);
        cpu.tick();
        timer.to(StageClock::WaitIn);
    }
}

std::vector<std::string> GpuPipeline::summary() const {
    const double wall = ms_between(ready_, ended_at_);
    std::vector<std::string> out;
    char head[320];
    std::snprintf(head, sizeof head,
                  "%s: %s; %zu files claimed in %zu batches over %.3f s since ready (%.0f files/s); host threads %.2f cores",
                  name_.c_str(), setup_.c_str(), claimed_.load(), batches_done_.load(), wall / 1e3,
                  wall > 0 ? claimed_.load() / (wall / 1e3) : 0.0,
                  wall > 0 ? static_cast<double>(cpu_ns_.load()) / 1e6 / wall : 0.0);
    out.push_back(head);
    const StageClock* stages[] = {&read_, &decode_, &device_decode_, &device_op_, &finish_, &device_finish_, &write_};
    const int threads[] = {t_.readers, 1, 1, 1, finishers(), finishers(), writers()};
    const char* units[] = {"files", "batches", "images", "images", "images", "images", "files"};
    const StageClock* busiest = nullptr;
    double top = -1;
    for (std::size_t k = 0; k < std::size(stages); ++k) {
        if (threads[k] == 0) continue;
        // The stage clocks were made before the thread counts were known: scale here.
        StageClock view(stages[k]->name(), threads[k]);
        view.add(StageClock::Busy, stages[k]->ms(StageClock::Busy));
        view.add(StageClock::WaitIn, stages[k]->ms(StageClock::WaitIn));
        view.add(StageClock::WaitOut, stages[k]->ms(StageClock::WaitOut));
        view.add_count(stages[k]->count());
        out.push_back("  " + name_ + " " + view.summary(wall, units[k]));
        if (view.busy_share(wall) > top) {
            top = view.busy_share(wall);
            busiest = stages[k];
        }
    }
    if (busiest) {
        char line[160];
        std::snprintf(line, sizeof line, "  %s busiest stage: %s (%.0f%% busy)", name_.c_str(), busiest->name().c_str(), 100 * top);
        out.push_back(line);
    }
    return out;
}

}  // namespace

std::unique_ptr<BatchWorker> make_gpu_pipeline(const Device& d, std::shared_ptr<const GpuJob> job,
                                               const PipelineTuning& tuning) {
    return std::make_unique<GpuPipeline>(d, std::move(job), tuning);
}

}  // namespace cli
