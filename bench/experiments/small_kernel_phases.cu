// Experiment (not part of the build): where the time of a small (640x480 .. 4K) 8-bit histogram goes. Kernel
// variants of the library's shape (privatized shared counters, one contiguous range per block) stop after
// each phase: counting only; + flushing to a global workspace with atomics; + the ticket and the last block's
// copy to the output (the library's overwrite mode); per-block partial counts summed by the last block; a
// memset of the output and atomics straight into it. Results and conclusions: docs/PERFORMANCE.md ("Host
// calls: a counting route"), docs/results/h100-s5-small-kernel-experiments.txt. Build and run:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o small_kernel_phases bench/experiments/small_kernel_phases.cu && ./small_kernel_phases
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <random>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); exit(1);} } while (0)

__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }
__global__ void __launch_bounds__(256) read_limit_kernel(const uint4* __restrict__ data, size_t n16, unsigned* sink) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        const uint4 a = data[i], b = data[i + stride], c = data[i + 2 * stride], d = data[i + 3 * stride];
        acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    }
    for (; i < n16; i += stride) acc ^= fold(data[i]);
    if (acc == 0x9E3779B9u) *sink = acc;
}
__global__ void empty_kernel() {}

__device__ __forceinline__ void sinc(unsigned addr) { asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(addr)); }

// PHASE: 1 count only; 2 + atomic flush to ws; 3 + ticket and last-block copy (the library's shape);
// 4 partial stores + ticket + last block sums partials; 5 atomic flush straight into out (needs zeroed out:
// memset before, timed together when MEMSET).
template <int PHASE, int COPIES>
__global__ void __launch_bounds__(256) var_kernel(const uint4* __restrict__ d4, size_t nv, unsigned* out, unsigned* ws,
                                                  unsigned* partial, unsigned* ticket, unsigned* sink) {
    __shared__ unsigned sm[256 * COPIES];
    __shared__ bool last;
    const unsigned tid = threadIdx.x, nt = blockDim.x;
    for (unsigned i = tid; i < 256 * COPIES; i += nt) sm[i] = 0u;
    __syncthreads();
    const unsigned lane_base = (unsigned)__cvta_generic_to_shared(sm) + 4u * (tid & (COPIES - 1));
    const size_t b = blockIdx.x, B = gridDim.x;
    const size_t v0 = nv * b / B, v1 = nv * (b + 1) / B;
    size_t i = v0 + tid;
    for (; i + 3 * nt < v1; i += 4 * nt) {
        uint4 q[4] = {__ldg(d4 + i), __ldg(d4 + i + nt), __ldg(d4 + i + 2 * nt), __ldg(d4 + i + 3 * nt)};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const unsigned w[4] = {q[j].x, q[j].y, q[j].z, q[j].w};
#pragma unroll
            for (int k = 0; k < 16; ++k) sinc(lane_base + __byte_perm(w[k >> 2], 0u, 0x4440u | (k & 3)) * (COPIES * 4u));
        }
    }
    for (; i < v1; i += nt) {
        const uint4 q = __ldg(d4 + i);
        const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int k = 0; k < 16; ++k) sinc(lane_base + __byte_perm(w[k >> 2], 0u, 0x4440u | (k & 3)) * (COPIES * 4u));
    }
    __syncthreads();
    unsigned sum = 0;
    if (tid < 256) {
#pragma unroll
        for (int k = 0; k < COPIES; ++k) sum += sm[tid * COPIES + ((k + tid) & (COPIES - 1))];
    }
    if (PHASE == 1) { if (sum == 0xFFFFFFFFu) *sink = sum; return; }
    if (PHASE == 5) { if (sum) atomicAdd(out + tid, sum); return; }
    if (PHASE == 2 || PHASE == 3) { if (sum) atomicAdd(ws + tid, sum); }
    if (PHASE == 4) partial[b * 256 + tid] = sum;
    if (PHASE == 2) return;
    __threadfence();
    __syncthreads();
    if (tid == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    if (PHASE == 3) {
        out[tid] = __ldcg(ws + tid);
        ws[tid] = 0u;
    } else {
        unsigned v = 0;
        for (unsigned k = 0; k < B; ++k) v += __ldcg(partial + k * 256 + tid);
        out[tid] = v;
    }
    if (tid == 0) *ticket = 0u;
}

__global__ void spin(long long cycles) { long long s = clock64(); while (clock64() - s < cycles) {} }

template <class Op>
double time_op(Op op, cudaStream_t st, int reps = 41) {
    for (int i = 0; i < 3; ++i) op();
    CK(cudaStreamSynchronize(st));
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    spin<<<1, 1, 0, st>>>(1000000);
    for (int i = 0; i < reps; ++i) { CK(cudaEventRecord(ev[2 * i], st)); op(); CK(cudaEventRecord(ev[2 * i + 1], st)); }
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    std::vector<float> ms(reps);
    for (int i = 0; i < reps; ++i) CK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
    for (auto& e : ev) cudaEventDestroy(e);
    std::sort(ms.begin(), ms.end());
    return ms[reps / 2] * 1000.0;
}

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    unsigned *out, *ws, *partial, *ticket, *sink;
    CK(cudaMalloc(&out, 4096)); CK(cudaMalloc(&ws, 4096)); CK(cudaMalloc(&partial, 4 << 20)); CK(cudaMalloc(&ticket, 4)); CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(ticket, 0, 4)); CK(cudaMemset(ws, 0, 4096));
    uint8_t* d; CK(cudaMalloc(&d, 8 << 20));
    std::mt19937 rng(3);
    std::vector<uint8_t> h(8 << 20);
    for (auto& x : h) x = rng() & 255;
    CK(cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice));
    printf("empty kernel %.2f us\n", time_op([&] { empty_kernel<<<1, 32, 0, st>>>(); }, st));
    printf("memset 1 KiB %.2f us\n", time_op([&] { CK(cudaMemsetAsync(out, 0, 1024, st)); }, st));
    for (size_t n : {(size_t)640 * 480, (size_t)1920 * 1080, (size_t)3840 * 2160}) {
        const size_t nv = n / 16;
        std::vector<unsigned> ref(256, 0);
        for (size_t i = 0; i < nv * 16; ++i) ref[h[i]]++;
        const double tr = time_op([&] { int blocks = std::max<size_t>(1, std::min<size_t>(prop.multiProcessorCount * 8, (nv + 255) / 256));
            read_limit_kernel<<<blocks, 256, 0, st>>>((const uint4*)d, nv, sink); }, st);
        printf("n=%zu read %.2f\n", n, tr);
        for (int kb : {4, 8, 16, 32}) {
            const int B = (int)std::max<size_t>(1, n / (kb * 1024));
            if (B > 1024) continue;
            auto L = [&](auto kern) { kern<<<B, 256, 0, st>>>((const uint4*)d, nv, out, ws, partial, ticket, sink); };
            const double t1 = time_op([&] { L(var_kernel<1, 8>); }, st);
            const double t2 = time_op([&] { L(var_kernel<2, 8>); }, st);
            CK(cudaMemset(ws, 0, 4096));
            const double t3 = time_op([&] { L(var_kernel<3, 8>); }, st);
            std::vector<unsigned> got(256);
            CK(cudaMemcpy(got.data(), out, 1024, cudaMemcpyDeviceToHost));
            const bool ok3 = got == ref;
            const double t4 = time_op([&] { L(var_kernel<4, 8>); }, st);
            CK(cudaMemcpy(got.data(), out, 1024, cudaMemcpyDeviceToHost));
            const bool ok4 = got == ref;
            const double t5 = time_op([&] { CK(cudaMemsetAsync(out, 0, 1024, st)); L(var_kernel<5, 8>); }, st);
            CK(cudaMemcpy(got.data(), out, 1024, cudaMemcpyDeviceToHost));
            const bool ok5 = got == ref;
            const double t1c1 = time_op([&] { L(var_kernel<1, 1>); }, st);
            const double t3c2 = time_op([&] { L(var_kernel<3, 2>); }, st);
            CK(cudaMemset(ws, 0, 4096));
            printf("  %2d KiB/block (%4d blocks): count %.2f | +atomic flush %.2f | +ticket (library) %.2f%s | partials+ticket %.2f%s | memset+atomic-out %.2f%s | count 1 copy %.2f | library 2 copies %.2f\n",
                   kb, B, t1, t2, t3, ok3 ? "" : "(WRONG)", t4, ok4 ? "" : "(WRONG)", t5, ok5 ? "" : "(WRONG)", t1c1, t3c2);
        }
    }
    return 0;
}
