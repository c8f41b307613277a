// imghist_jobs — nvJPEG and the few CUDA driver calls the GPU JPEG pipeline needs, loaded at run time.
//
// The build needs no nvJPEG headers and the program no nvJPEG library: libnvjpeg and libcuda are opened with
// dlopen when a run asks for the GPU JPEG path, and a missing library only means that the CPU codecs are used.
// The declarations below are the subset of the C APIs we call, written from NVIDIA's public documentation of
// nvJPEG (CUDA 11-13) and of the driver API. The numeric values of the enums and the layout of nvjpegImage_t
// are checked against the real nvjpeg.h by tests/gpu_jpeg/nvjpeg_abi_check.cpp (compiled on a host that has
// the header).
//
// Only this file and nvjpeg_api.cpp know these declarations; the pipeline (gpu_jpeg.cpp) calls through the
// NvJpegApi table.
#pragma once

#include <cstddef>
#include <string>

struct CUstream_st;  // = cudaStream_t = CUstream

namespace cli::nv {

using Stream = CUstream_st*;

// ---- nvJPEG ----------------------------------------------------------------------------------------------

constexpr int kMaxComponent = 4;  // NVJPEG_MAX_COMPONENT

enum Status : int {  // nvjpegStatus_t
    kSuccess = 0,
    kNotInitialized = 1,
    kInvalidParameter = 2,
    kBadJpeg = 3,
    kJpegNotSupported = 4,
    kAllocatorFailure = 5,
    kExecutionFailed = 6,
    kArchMismatch = 7,
    kInternalError = 8,
    kImplementationNotSupported = 9,
    kIncompleteBitstream = 10,
};

enum ChromaSubsampling : int {  // nvjpegChromaSubsampling_t
    kCss444 = 0,
    kCss422 = 1,
    kCss420 = 2,
    kCss440 = 3,
    kCss411 = 4,
    kCss410 = 5,
    kCssGray = 6,
    kCss410V = 7,
    kCssUnknown = -1,
};

enum OutputFormat : int {  // nvjpegOutputFormat_t
    kOutputUnchanged = 0,
    kOutputYUV = 1,
    kOutputY = 2,
    kOutputRGB = 3,
    kOutputBGR = 4,
    kOutputRGBI = 5,
    kOutputBGRI = 6,
};

enum InputFormat : int {  // nvjpegInputFormat_t
    kInputRGB = 3,
    kInputBGR = 4,
    kInputRGBI = 5,
    kInputBGRI = 6,
};

enum Backend : int {  // nvjpegBackend_t
    kBackendDefault = 0,
    kBackendHybrid = 1,
    kBackendGpuHybrid = 2,
    kBackendHardware = 3,
};

/// nvjpegImage_t: one pointer and one pitch per component (planar formats use 1-3, interleaved ones 1).
struct Image {
    unsigned char* channel[kMaxComponent];
    std::size_t pitch[kMaxComponent];
};

struct HandleOpaque;
struct JpegStateOpaque;
struct EncoderStateOpaque;
struct EncoderParamsOpaque;
using Handle = HandleOpaque*;               // nvjpegHandle_t
using JpegState = JpegStateOpaque*;         // nvjpegJpegState_t
using EncoderState = EncoderStateOpaque*;   // nvjpegEncoderState_t
using EncoderParams = EncoderParamsOpaque*; // nvjpegEncoderParams_t

/// Function table; every pointer is set once load() returned true.
struct NvJpegApi {
    Status (*CreateEx)(Backend backend, void* dev_allocator, void* pinned_allocator, unsigned flags, Handle* handle);
    Status (*Destroy)(Handle handle);
    Status (*JpegStateCreate)(Handle handle, JpegState* state);
    Status (*JpegStateDestroy)(JpegState state);
    Status (*Decode)(Handle handle, JpegState state, const unsigned char* data, std::size_t length,
                     OutputFormat format, Image* destination, Stream stream);
    Status (*DecodeBatchedInitialize)(Handle handle, JpegState state, int batch_size, int max_cpu_threads,
                                      OutputFormat format);
    Status (*DecodeBatched)(Handle handle, JpegState state, const unsigned char* const* data,
                            const std::size_t* lengths, Image* destinations, Stream stream);
    /// Sizes a batched state's device buffers for `batch_size` images of up to width x height at `subsampling`,
    /// which otherwise grow (free, then allocate) whenever a batch needs more than any before. nullptr where
    /// the library lacks it (it is documented as experimental).
    Status (*DecodeBatchedPreAllocate)(Handle handle, JpegState state, int batch_size, int width, int height,
                                       ChromaSubsampling subsampling, OutputFormat format);
    Status (*EncoderStateCreate)(Handle handle, EncoderState* state, Stream stream);
    Status (*EncoderStateDestroy)(EncoderState state);
    Status (*EncoderParamsCreate)(Handle handle, EncoderParams* params, Stream stream);
    Status (*EncoderParamsDestroy)(EncoderParams params);
    Status (*EncoderParamsSetQuality)(EncoderParams params, int quality, Stream stream);
    Status (*EncoderParamsSetOptimizedHuffman)(EncoderParams params, int optimized, Stream stream);
    Status (*EncoderParamsSetSamplingFactors)(EncoderParams params, ChromaSubsampling subsampling, Stream stream);
    Status (*EncodeYUV)(Handle handle, EncoderState state, EncoderParams params, const Image* source,
                        ChromaSubsampling subsampling, int width, int height, Stream stream);
    Status (*EncodeImage)(Handle handle, EncoderState state, EncoderParams params, const Image* source,
                          InputFormat format, int width, int height, Stream stream);
    /// data == nullptr: *length receives the size; waits for the encode on `stream`.
    Status (*EncodeRetrieveBitstream)(Handle handle, EncoderState state, unsigned char* data, std::size_t* length,
                                      Stream stream);
};

/// "NVJPEG_STATUS_BAD_JPEG" and so on.
const char* status_name(Status s) noexcept;

// ---- CUDA driver ------------------------------------------------------------------------------------------

using CuResult = int;  // CUresult: 0 = CUDA_SUCCESS
constexpr CuResult kCuNotReady = 600;  // CUDA_ERROR_NOT_READY
struct CuCtxOpaque;
using CuContext = CuCtxOpaque*;
struct CuEventOpaque;
using Event = CuEventOpaque*;  // CUevent = cudaEvent_t
constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventDefault = 0;       // CU_EVENT_DEFAULT: timing on
constexpr unsigned kEventDisableTiming = 2; // CU_EVENT_DISABLE_TIMING
constexpr unsigned kCtxSchedAuto = 0;         // CU_CTX_SCHED_AUTO
constexpr unsigned kCtxSchedBlockingSync = 4; // CU_CTX_SCHED_BLOCKING_SYNC

struct DriverApi {
    CuResult (*Init)(unsigned flags);
    CuResult (*DeviceGet)(int* device, int ordinal);
    CuResult (*DevicePrimaryCtxRetain)(CuContext* ctx, int device);
    CuResult (*DevicePrimaryCtxRelease)(int device);
    CuResult (*DevicePrimaryCtxSetFlags)(int device, unsigned flags);
    CuResult (*CtxSetCurrent)(CuContext ctx);
    CuResult (*StreamCreate)(Stream* stream, unsigned flags);
    CuResult (*StreamDestroy)(Stream stream);
    CuResult (*StreamSynchronize)(Stream stream);
    CuResult (*StreamWaitEvent)(Stream stream, Event event, unsigned flags);
    CuResult (*EventCreate)(Event* event, unsigned flags);
    CuResult (*EventDestroy)(Event event);
    CuResult (*EventRecord)(Event event, Stream stream);
    CuResult (*EventSynchronize)(Event event);
    CuResult (*EventQuery)(Event event);
    CuResult (*EventElapsedTime)(float* ms, Event start, Event end);
    CuResult (*MemcpyDtoHAsync)(void* host, unsigned long long device, std::size_t bytes, Stream stream);
};

/// The nvJPEG library file to try first (--nvjpeg); takes effect when called before the first nvjpeg().
void set_nvjpeg_library(const std::string& file);
/// Loads both libraries once (thread-safe). Returns nullptr and sets `why` when either is missing.
const NvJpegApi* nvjpeg(std::string* why = nullptr);
const DriverApi* driver(std::string* why = nullptr);

}  // namespace cli::nv
