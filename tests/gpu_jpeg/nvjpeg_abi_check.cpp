// Compile-time check of jobs/gpu/nvjpeg_api.hpp against NVIDIA's nvjpeg.h and cuda.h: every enum value
// we declare, the layout of nvjpegImage_t, and the type of every function we load. Compiling this file is the test
// (no code runs); it needs nvjpeg.h, so it is built only where the header exists, e.g.
//   g++ -std=c++17 -fsyntax-only -I/usr/local/cuda/include -Ijobs tests/gpu_jpeg/nvjpeg_abi_check.cpp
#include <cuda.h>
#include <nvjpeg.h>

#include <cstddef>
#include <type_traits>

#include "gpu/nvjpeg_api.hpp"

namespace nv = cli::nv;

static_assert(NVJPEG_MAX_COMPONENT == nv::kMaxComponent, "NVJPEG_MAX_COMPONENT");

#define SAME(ours, theirs) static_assert(static_cast<int>(ours) == static_cast<int>(theirs), #theirs)
SAME(nv::kSuccess, NVJPEG_STATUS_SUCCESS);
SAME(nv::kNotInitialized, NVJPEG_STATUS_NOT_INITIALIZED);
SAME(nv::kInvalidParameter, NVJPEG_STATUS_INVALID_PARAMETER);
SAME(nv::kBadJpeg, NVJPEG_STATUS_BAD_JPEG);
SAME(nv::kJpegNotSupported, NVJPEG_STATUS_JPEG_NOT_SUPPORTED);
SAME(nv::kAllocatorFailure, NVJPEG_STATUS_ALLOCATOR_FAILURE);
SAME(nv::kExecutionFailed, NVJPEG_STATUS_EXECUTION_FAILED);
SAME(nv::kArchMismatch, NVJPEG_STATUS_ARCH_MISMATCH);
SAME(nv::kInternalError, NVJPEG_STATUS_INTERNAL_ERROR);
SAME(nv::kImplementationNotSupported, NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED);
SAME(nv::kIncompleteBitstream, NVJPEG_STATUS_INCOMPLETE_BITSTREAM);
SAME(nv::kCss444, NVJPEG_CSS_444);
SAME(nv::kCss422, NVJPEG_CSS_422);
SAME(nv::kCss420, NVJPEG_CSS_420);
SAME(nv::kCss440, NVJPEG_CSS_440);
SAME(nv::kCss411, NVJPEG_CSS_411);
SAME(nv::kCss410, NVJPEG_CSS_410);
SAME(nv::kCssGray, NVJPEG_CSS_GRAY);
SAME(nv::kCss410V, NVJPEG_CSS_410V);
SAME(nv::kCssUnknown, NVJPEG_CSS_UNKNOWN);
SAME(nv::kOutputUnchanged, NVJPEG_OUTPUT_UNCHANGED);
SAME(nv::kOutputYUV, NVJPEG_OUTPUT_YUV);
SAME(nv::kOutputY, NVJPEG_OUTPUT_Y);
SAME(nv::kOutputRGB, NVJPEG_OUTPUT_RGB);
SAME(nv::kOutputBGR, NVJPEG_OUTPUT_BGR);
SAME(nv::kOutputRGBI, NVJPEG_OUTPUT_RGBI);
SAME(nv::kOutputBGRI, NVJPEG_OUTPUT_BGRI);
SAME(nv::kInputRGB, NVJPEG_INPUT_RGB);
SAME(nv::kInputBGR, NVJPEG_INPUT_BGR);
SAME(nv::kInputRGBI, NVJPEG_INPUT_RGBI);
SAME(nv::kInputBGRI, NVJPEG_INPUT_BGRI);
SAME(nv::kBackendDefault, NVJPEG_BACKEND_DEFAULT);
SAME(nv::kBackendHybrid, NVJPEG_BACKEND_HYBRID);
SAME(nv::kBackendGpuHybrid, NVJPEG_BACKEND_GPU_HYBRID);
SAME(nv::kBackendHardware, NVJPEG_BACKEND_HARDWARE);
#undef SAME

// Enums are passed by value as int: their size must be an int's.
static_assert(sizeof(nvjpegStatus_t) == sizeof(int) && sizeof(nvjpegChromaSubsampling_t) == sizeof(int) &&
              sizeof(nvjpegOutputFormat_t) == sizeof(int) && sizeof(nvjpegInputFormat_t) == sizeof(int) &&
              sizeof(nvjpegBackend_t) == sizeof(int), "enum sizes");

static_assert(sizeof(nvjpegImage_t) == sizeof(nv::Image), "nvjpegImage_t size");
static_assert(offsetof(nvjpegImage_t, channel) == offsetof(nv::Image, channel), "nvjpegImage_t::channel");
static_assert(offsetof(nvjpegImage_t, pitch) == offsetof(nv::Image, pitch), "nvjpegImage_t::pitch");
static_assert(sizeof(nvjpegImage_t::pitch) == sizeof(nv::Image::pitch), "nvjpegImage_t::pitch type");
static_assert(std::is_same<std::remove_extent<decltype(nvjpegImage_t::pitch)>::type, std::size_t>::value,
              "nvjpegImage_t::pitch is size_t");
static_assert(std::is_same<cudaStream_t, nv::Stream>::value, "cudaStream_t");

// Function types: ours with the opaque handles mapped to theirs must be theirs. Parameters of handle type
// are checked by size and position through a pointer-to-function cast of identical arity.
template <class R, class... A> constexpr std::size_t arity(R (*)(A...)) { return sizeof...(A); }
#define ARITY(field, fn) static_assert(arity(decltype(nv::NvJpegApi::field){}) == arity(&fn), #fn " arity")
ARITY(CreateEx, nvjpegCreateEx);
ARITY(Destroy, nvjpegDestroy);
ARITY(JpegStateCreate, nvjpegJpegStateCreate);
ARITY(JpegStateDestroy, nvjpegJpegStateDestroy);
ARITY(Decode, nvjpegDecode);
ARITY(DecodeBatchedInitialize, nvjpegDecodeBatchedInitialize);
ARITY(DecodeBatched, nvjpegDecodeBatched);
ARITY(DecodeBatchedPreAllocate, nvjpegDecodeBatchedPreAllocate);
ARITY(EncoderStateCreate, nvjpegEncoderStateCreate);
ARITY(EncoderStateDestroy, nvjpegEncoderStateDestroy);
ARITY(EncoderParamsCreate, nvjpegEncoderParamsCreate);
ARITY(EncoderParamsDestroy, nvjpegEncoderParamsDestroy);
ARITY(EncoderParamsSetQuality, nvjpegEncoderParamsSetQuality);
ARITY(EncoderParamsSetOptimizedHuffman, nvjpegEncoderParamsSetOptimizedHuffman);
ARITY(EncoderParamsSetSamplingFactors, nvjpegEncoderParamsSetSamplingFactors);
ARITY(EncodeYUV, nvjpegEncodeYUV);
ARITY(EncodeImage, nvjpegEncodeImage);
ARITY(EncodeRetrieveBitstream, nvjpegEncodeRetrieveBitstream);
#undef ARITY

// The exact parameter types of the calls whose non-handle arguments matter most.
static_assert(std::is_same<decltype(&nvjpegDecodeBatched),
                           nvjpegStatus_t (*)(nvjpegHandle_t, nvjpegJpegState_t, const unsigned char* const*,
                                              const size_t*, nvjpegImage_t*, cudaStream_t)>::value,
              "nvjpegDecodeBatched");
static_assert(std::is_same<decltype(&nvjpegDecodeBatchedPreAllocate),
                           nvjpegStatus_t (*)(nvjpegHandle_t, nvjpegJpegState_t, int, int, int,
                                              nvjpegChromaSubsampling_t, nvjpegOutputFormat_t)>::value,
              "nvjpegDecodeBatchedPreAllocate");
static_assert(std::is_same<decltype(&nvjpegEncodeRetrieveBitstream),
                           nvjpegStatus_t (*)(nvjpegHandle_t, nvjpegEncoderState_t, unsigned char*, size_t*,
                                              cudaStream_t)>::value,
              "nvjpegEncodeRetrieveBitstream");
static_assert(std::is_same<decltype(&nvjpegCreateEx),
                           nvjpegStatus_t (*)(nvjpegBackend_t, nvjpegDevAllocator_t*, nvjpegPinnedAllocator_t*,
                                              unsigned int, nvjpegHandle_t*)>::value,
              "nvjpegCreateEx");

// The CUDA driver calls: constants, and the arity of each (handles are the driver's opaque pointers).
static_assert(nv::kCuNotReady == CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY");
static_assert(nv::kStreamNonBlocking == CU_STREAM_NON_BLOCKING, "CU_STREAM_NON_BLOCKING");
static_assert(nv::kEventDefault == CU_EVENT_DEFAULT, "CU_EVENT_DEFAULT");
static_assert(nv::kEventDisableTiming == CU_EVENT_DISABLE_TIMING, "CU_EVENT_DISABLE_TIMING");
static_assert(nv::kCtxSchedAuto == CU_CTX_SCHED_AUTO, "CU_CTX_SCHED_AUTO");
static_assert(nv::kCtxSchedBlockingSync == CU_CTX_SCHED_BLOCKING_SYNC, "CU_CTX_SCHED_BLOCKING_SYNC");
static_assert(sizeof(CUevent) == sizeof(nv::Event) && sizeof(CUstream) == sizeof(nv::Stream), "driver handles");
#define DRIVER_ARITY(field, fn) static_assert(arity(decltype(nv::DriverApi::field){}) == arity(&fn), #fn " arity")
DRIVER_ARITY(DevicePrimaryCtxSetFlags, cuDevicePrimaryCtxSetFlags);
DRIVER_ARITY(StreamSynchronize, cuStreamSynchronize);
DRIVER_ARITY(StreamWaitEvent, cuStreamWaitEvent);
DRIVER_ARITY(EventCreate, cuEventCreate);
DRIVER_ARITY(EventDestroy, cuEventDestroy);
DRIVER_ARITY(EventRecord, cuEventRecord);
DRIVER_ARITY(EventSynchronize, cuEventSynchronize);
DRIVER_ARITY(EventQuery, cuEventQuery);
DRIVER_ARITY(EventElapsedTime, cuEventElapsedTime);
DRIVER_ARITY(MemcpyDtoHAsync, cuMemcpyDtoHAsync);
#undef DRIVER_ARITY
static_assert(std::is_same<decltype(&cuEventElapsedTime), CUresult (*)(float*, CUevent, CUevent)>::value,
              "cuEventElapsedTime");
static_assert(std::is_same<decltype(&cuMemcpyDtoHAsync), CUresult (*)(void*, CUdeviceptr, size_t, CUstream)>::value &&
                  sizeof(CUdeviceptr) == sizeof(unsigned long long),
              "cuMemcpyDtoHAsync");
