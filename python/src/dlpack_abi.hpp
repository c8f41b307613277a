// The DLPack C ABI (v0.8, "dltensor" capsules), as far as a consumer needs it: a producer's
// __dlpack__() returns a PyCapsule named "dltensor" that holds a DLManagedTensor*. The consumer renames the
// capsule "used_dltensor" and calls the tensor's deleter when it no longer needs the memory.
// The layout is fixed by the DLPack specification (dmlc/dlpack, include/dlpack/dlpack.h); these
// declarations spell out that layout so the module needs no extra header.
#pragma once

#include <cstdint>

namespace imghist_py::dlpack {

enum DeviceType : std::int32_t {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,     ///< page-locked host memory: readable by the CPU
    kDLCUDAManaged = 13, ///< managed memory: readable by the CPU and the GPU
};

enum TypeCode : std::uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2 };

struct Device {
    std::int32_t device_type;
    std::int32_t device_id;
};

struct DataType {
    std::uint8_t code;
    std::uint8_t bits;
    std::uint16_t lanes;
};

struct Tensor {
    void* data;
    Device device;
    std::int32_t ndim;
    DataType dtype;
    std::int64_t* shape;
    std::int64_t* strides;  ///< in elements; nullptr = compact row-major
    std::uint64_t byte_offset;
};

struct ManagedTensor {
    Tensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(ManagedTensor* self);
};

}  // namespace imghist_py::dlpack
