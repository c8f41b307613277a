// Shared test support: capturing a stream into a CUDA graph without leaving the capture open.
//
// A capture that stays open after a failed check breaks the rest of the process: in global mode every later
// CUDA call that may synchronise (cudaMemcpy, cudaEventSynchronize, cudaMalloc, ...) fails with
// cudaErrorStreamCaptureUnsupported in every thread, in thread-local mode in the capturing thread, so one failing
// capture test would fail every CUDA case after it. StreamCapture ends the capture on every path out of the test.
#pragma once

#include <catch2/catch.hpp>
#include <cuda_runtime.h>

namespace imghist_test {

/// A graph captured from `stream`: begun by the constructor, ended by end(). The destructor ends a capture that
/// is still open (a REQUIRE threw between the two, or the captured code did) and destroys the graph and its
/// instance, then clears the thread's last CUDA error, which a failed capture leaves behind for the next launch
/// check to find.
class StreamCapture {
public:
    StreamCapture(cudaStream_t stream, cudaStreamCaptureMode mode) : stream_(stream) {
        REQUIRE(cudaStreamBeginCapture(stream, mode) == cudaSuccess);
        open_ = true;
    }
    StreamCapture(const StreamCapture&) = delete;
    StreamCapture& operator=(const StreamCapture&) = delete;
    ~StreamCapture() {
        if (open_) {
            cudaGraph_t partial = nullptr;
            cudaStreamEndCapture(stream_, &partial);
            if (partial) cudaGraphDestroy(partial);
        }
        if (exec_) cudaGraphExecDestroy(exec_);
        if (graph_) cudaGraphDestroy(graph_);
        cudaGetLastError();
    }
    /// Ends the capture and returns the graph (owned by this object).
    cudaGraph_t end() {
        open_ = false;  // cudaStreamEndCapture ends the capture even when it fails
        REQUIRE(cudaStreamEndCapture(stream_, &graph_) == cudaSuccess);
        REQUIRE(graph_ != nullptr);
        return graph_;
    }
    /// The ended capture's graph, instantiated (owned by this object).
    cudaGraphExec_t instantiate() {
        REQUIRE(graph_ != nullptr);
        REQUIRE(cudaGraphInstantiate(&exec_, graph_, 0) == cudaSuccess);
        return exec_;
    }

private:
    cudaStream_t stream_;
    bool open_ = false;
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
};

}  // namespace imghist_test
