// libimghist_timeline.so — a device timeline of any CUDA program, for hosts without Nsight Systems.
//
//   CUDA_INJECTION64_PATH=.../libimghist_timeline.so imghist equalize in/ out/ ...
//   python3 bench/timeline/summarize.py timeline-PID.tl
//
// The CUDA driver loads the library named by CUDA_INJECTION64_PATH when it initialises and calls its
// InitializeInjection(). From then on CUPTI's activity API records every driver API call the program makes (the
// calling thread's system id and name, start and end), every kernel, copy and memset on the device, and this
// library writes one line per record to timeline-PID.tl in the working folder (PID: the program's process id,
// also printed on stderr):
//
//   T tid name                           a thread of the process and its name (sampled every 50 ms; again
//                                        when it changes: the last line counts)
//   A tid start end call                 a driver API call (ns on CUPTI's clock)
//   K stream start end kernel            a kernel
//   M stream start end kind bytes src dst  a copy (CUpti_ActivityMemcpyKind, CUpti_ActivityMemoryKind numbers)
//   S stream start end bytes             a memset
//
// Records reach the file in buffers (flushed every 200 ms and at a normal exit: run imghist with
// --pipeline exit=normal, its fast exit skips the last buffer). Recording costs time — equalize of 10 000 1080p
// JPEGs ran 10-20% slower — so it shows where a run's time goes, not how long it takes.
#include <cupti.h>
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <map>
#include <string>
#include <thread>

namespace {

std::FILE* out = nullptr;
std::mutex out_m;
std::map<unsigned, std::string> named;  // each thread's name as last written

constexpr std::size_t kBufferBytes = 32u << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;
}

// The thread's name (pthread_setname_np; imghist names its threads) while the thread still exists; the
// caller holds out_m.
void name_thread(unsigned tid) {
    char path[64], name[64] = "?";
    std::snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
    if (std::FILE* f = std::fopen(path, "r")) {
        if (std::fgets(name, sizeof name, f)) name[std::strcspn(name, "\n")] = 0;
        std::fclose(f);
    }
    auto it = named.find(tid);
    if (it != named.end() && (it->second == name || std::strcmp(name, "?") == 0)) return;
    named[tid] = name;
    std::fprintf(out, "T %u %s\n", tid, name);
}

unsigned long long u(uint64_t v) { return static_cast<unsigned long long>(v); }

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    std::lock_guard<std::mutex> l(out_m);
    CUpti_Activity* r = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
        switch (r->kind) {
            case CUPTI_ACTIVITY_KIND_DRIVER: {
                const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(r);
                const char* call = "?";
                cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, a->cbid, &call);
                if (!named.count(a->threadId)) name_thread(a->threadId);
                std::fprintf(out, "A %u %llu %llu %s\n", a->threadId, u(a->start), u(a->end), call);
                break;
            }
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
                const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
                std::fprintf(out, "K %u %llu %llu %s\n", k->streamId, u(k->start), u(k->end), k->name);
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
                std::fprintf(out, "M %u %llu %llu %u %llu %u %u\n", c->streamId, u(c->start), u(c->end),
                             unsigned(c->copyKind), u(c->bytes), unsigned(c->srcKind), unsigned(c->dstKind));
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                const auto* s = reinterpret_cast<const CUpti_ActivityMemset4*>(r);
                std::fprintf(out, "S %u %llu %llu %llu\n", s->streamId, u(s->start), u(s->end), u(s->bytes));
                break;
            }
            default: break;
        }
    }
    std::fflush(out);
    std::free(buffer);
}

// Records arrive once a buffer is full or at the exit, when most threads are gone: their names are taken
// while they run.
void name_threads_while_running() {
    for (;;) {
        if (DIR* d = opendir("/proc/self/task")) {
            std::lock_guard<std::mutex> l(out_m);
            while (const dirent* e = readdir(d))
                if (e->d_name[0] != '.') name_thread(static_cast<unsigned>(std::stoul(e->d_name)));
            closedir(d);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

void flush_at_exit() { cuptiActivityFlushAll(1); }

}  // namespace

extern "C" int InitializeInjection(void) {
    char path[64];
    std::snprintf(path, sizeof path, "timeline-%ld.tl", static_cast<long>(getpid()));
    out = std::fopen(path, "w");
    if (!out) {
        std::fprintf(stderr, "imghist timeline: cannot write %s in the working folder\n", path);
        return 0;
    }
    std::fprintf(stderr, "imghist timeline: recording to %s\n", path);
    bool ok = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) == CUPTI_SUCCESS &&
              cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) == CUPTI_SUCCESS;
    for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                 CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET})
        ok = ok && cuptiActivityEnable(k) == CUPTI_SUCCESS;
    if (!ok) {
        std::fprintf(stderr, "imghist timeline: CUPTI refused the activity records\n");
        return 0;
    }
    cuptiActivityFlushPeriod(200);
    std::atexit(flush_at_exit);
    std::thread(name_threads_while_running).detach();
    return 1;
}
