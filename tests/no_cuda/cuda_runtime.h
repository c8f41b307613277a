// The CUDA runtime as the tests see it in a build without CUDA (IMGHIST_WITH_CUDA=OFF; put on the tests'
// include path instead of the toolkit's header). It declares only what the test sources call, and every
// call fails with cudaErrorNoDevice, as the real runtime does on a machine without a device. So the CUDA
// test cases compile unchanged and report themselves skipped (imghist::cuda_available() is false before
// any of them reaches these calls), and a case that reached one anyway would fail its REQUIRE, not pass.
#pragma once

#include <cstddef>

#include "imghist/histogram.hpp"

using cudaStream_t = imghist::Stream;
using cudaHostFn_t = void (*)(void*);
enum cudaError_t { cudaSuccess = 0, cudaErrorNoDevice = 100 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
constexpr unsigned cudaStreamNonBlocking = 1;
#define cudaStreamLegacy (reinterpret_cast<cudaStream_t>(0x1))

inline cudaError_t cudaGetDeviceCount(int* count) {
    *count = 0;
    return cudaErrorNoDevice;
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaErrorNoDevice; }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
    *s = nullptr;
    return cudaErrorNoDevice;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaErrorNoDevice; }
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaErrorNoDevice; }
inline cudaError_t cudaLaunchHostFunc(cudaStream_t, cudaHostFn_t, void*) { return cudaErrorNoDevice; }
template <class T> cudaError_t cudaMalloc(T** p, std::size_t) {
    *p = nullptr;
    return cudaErrorNoDevice;
}
template <class T> cudaError_t cudaMallocHost(T** p, std::size_t) {
    *p = nullptr;
    return cudaErrorNoDevice;
}
inline cudaError_t cudaFree(void*) { return cudaErrorNoDevice; }
inline cudaError_t cudaFreeHost(void*) { return cudaErrorNoDevice; }
inline cudaError_t cudaMemsetAsync(void*, int, std::size_t, cudaStream_t = nullptr) { return cudaErrorNoDevice; }
inline cudaError_t cudaMemset2D(void*, std::size_t, int, std::size_t, std::size_t) { return cudaErrorNoDevice; }
inline cudaError_t cudaMemcpyAsync(void*, const void*, std::size_t, cudaMemcpyKind, cudaStream_t = nullptr) {
    return cudaErrorNoDevice;
}
inline cudaError_t cudaMemcpy2D(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t, cudaMemcpyKind) {
    return cudaErrorNoDevice;
}
inline cudaError_t cudaMemset(void*, int, std::size_t) { return cudaErrorNoDevice; }
// Graph capture (the one-pass overwrite's replay test).
struct CUgraph_st;
struct CUgraphExec_st;
using cudaGraph_t = CUgraph_st*;
using cudaGraphExec_t = CUgraphExec_st*;
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed };
inline cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) { return cudaErrorNoDevice; }
inline cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t* g) {
    *g = nullptr;
    return cudaErrorNoDevice;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t, unsigned long long) {
    *e = nullptr;
    return cudaErrorNoDevice;
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) { return cudaErrorNoDevice; }
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t) { return cudaErrorNoDevice; }
inline cudaError_t cudaGraphDestroy(cudaGraph_t) { return cudaErrorNoDevice; }
// What a captured graph holds (the batch filters' launch count).
struct CUgraphNode_st;
using cudaGraphNode_t = CUgraphNode_st*;
enum cudaGraphNodeType { cudaGraphNodeTypeKernel = 0, cudaGraphNodeTypeMemcpy = 1, cudaGraphNodeTypeMemset = 2 };
inline cudaError_t cudaGraphGetNodes(cudaGraph_t, cudaGraphNode_t*, std::size_t* n) {
    *n = 0;
    return cudaErrorNoDevice;
}
inline cudaError_t cudaGraphNodeGetType(cudaGraphNode_t, cudaGraphNodeType*) { return cudaErrorNoDevice; }
