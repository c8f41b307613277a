// Experiment (not part of the build): where the time of a small (640x480 .. 8K) 8-bit histogram goes. Kernel
// variants of the library's shape (privatized shared counters, one contiguous range per block) stop after
// each phase: counting only; + flushing to a global workspace with atomics; + the ticket and the last block's
// copy to the output (the library's overwrite before the one-pass overwrite); per-block partial counts
// summed by the last block; a memset of the output and atomics straight into it; the output zeroed inside
// the launch, the others adding straight into it once that is published — by the block that claims an epoch
// from the host, by block 0, or by the first block to arrive with no per-launch value (what the library
// does, PHASE 11); the zeroing as a separate kernel the counting kernel overlaps (programmatic dependent
// launch); per-bin tickets; the ticket as one acq_rel atomic; PHASE 11 with a 768-byte parameter block.
// CUB's HistogramEven on the same data for comparison. Conclusions: docs/DESIGN.md (decision records of the
// histogram kernels); raw outputs: git log -- docs/results. Build and run:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o small_kernel_phases bench/experiments/small_kernel_phases.cu && ./small_kernel_phases
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <random>
#include <cub/device/device_histogram.cuh>
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

// This block's share of the 16-byte vectors, counted into the COPIES privatized copies at sm.
template <int COPIES>
__device__ __forceinline__ void count_block_range(const uint4* __restrict__ d4, size_t nv, unsigned* sm) {
    const unsigned tid = threadIdx.x, nt = blockDim.x;
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
}

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
    count_block_range<COPIES>(d4, nv, sm);
    __syncthreads();
    unsigned sum = 0;
    if (tid < 256) {
#pragma unroll
        for (int k = 0; k < COPIES; ++k) sum += sm[tid * COPIES + ((k + tid) & (COPIES - 1))];
    }
    if (PHASE == 1) { if (sum == 0xFFFFFFFFu) *sink = sum; return; }
    if (PHASE == 5) { if (sum) atomicAdd(out + tid, sum); return; }
    if (PHASE == 2 || PHASE == 3) { if (sum) atomicAdd(ws + tid, sum); }
    if (PHASE == 4) partial[blockIdx.x * 256 + tid] = sum;
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
        for (unsigned k = 0; k < gridDim.x; ++k) v += __ldcg(partial + k * 256 + tid);
        out[tid] = v;
    }
    if (tid == 0) *ticket = 0u;
}


__device__ __forceinline__ unsigned long long ld_acquire(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release(unsigned long long* p, unsigned long long v) {
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// PHASE 6: one launch, no workspace counters. claim[0] = highest epoch claimed, claim[1] = highest epoch
// whose output is zeroed. The last warp of every block tries to claim this launch's epoch; the block that
// wins zeroes the output and publishes it, while its other warps (and every other block) already count.
// Before adding, a block waits for the publication; the winner is running, so the wait ends.
// PHASE 7 (with PDL): the output was zeroed by the kernel before; wait for it only before adding.
// PHASE 8: per-bin tickets, no zeroing and no last block: every block adds (1 << 40) + its count to every
// bin's 64-bit workspace word with a returning atomic; the block whose arrival makes the bin's arrival
// count reach the grid size has the bin's total, writes it to the output and clears the word.
// PHASE 9: block 0's last warp zeroes the output and publishes it with a release store (no claim; valid
// when the whole grid is resident at once); the others poll with acquire loads before adding.
// PHASE 10: the library's ticket, the fence folded into an acq_rel atomic.
// PHASE 11 and 12: no epoch (so a captured graph can replay the launch): the zeroer publishes the grid
// size in a word each block decrements after it has seen it (the last one leaves 0 for the next launch).
// 11: the zeroer is the block that arrives first (an arrival counter taken at the kernel's start, reset by
// the last arrival) — safe whatever order the blocks are scheduled in; 12: block 0 zeroes, as in 9.
template <int PHASE, int COPIES>
__device__ __forceinline__ void zero_in_body(const uint4* __restrict__ d4, size_t nv, unsigned* out,
                                             unsigned long long* claim, unsigned long long epoch) {
    __shared__ unsigned sm[256 * COPIES];
    const unsigned tid = threadIdx.x, nt = blockDim.x;
    for (unsigned i = tid; i < 256 * COPIES; i += nt) sm[i] = 0u;
    __syncthreads();
    if (PHASE == 9 && blockIdx.x == 0 && tid >= nt - 32) {
        for (unsigned i = tid & 31u; i < 256; i += 32) out[i] = 0u;
        __syncwarp();
        if ((tid & 31u) == 0) st_release(claim + 1, epoch);
    }
    unsigned* const arrive = reinterpret_cast<unsigned*>(claim + 2 + 512);
    unsigned* const ready = arrive + 1;
    if ((PHASE == 11 || (PHASE == 12 && blockIdx.x == 0)) && tid >= nt - 32) {
        unsigned a = 0;
        if (PHASE == 11 && (tid & 31u) == 0) {
            a = atomicAdd(arrive, 1u);
            if (a == gridDim.x - 1) *arrive = 0u;
        }
        a = __shfl_sync(0xFFFFFFFFu, a, 0);
        if (a == 0) {
            for (unsigned i = tid & 31u; i < 256; i += 32) out[i] = 0u;
            __syncwarp();
            if ((tid & 31u) == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(ready), "r"(gridDim.x) : "memory");
        }
    }
    if (PHASE == 6 && tid >= nt - 32) {
        const unsigned lane = tid & 31u;
        unsigned long long old = 0;
        if (lane == 0) old = atomicMax(claim, epoch);
        old = __shfl_sync(0xFFFFFFFFu, old, 0);
        if (old < epoch) {
            for (unsigned i = lane; i < 256; i += 32) out[i] = 0u;
            __threadfence();
            __syncwarp();
            if (lane == 0) st_release(claim + 1, epoch);
        }
    }
    count_block_range<COPIES>(d4, nv, sm);
    __syncthreads();
    unsigned sum = 0;
#pragma unroll
    for (int k = 0; k < COPIES; ++k) sum += sm[tid * COPIES + ((k + tid) & (COPIES - 1))];
    if (PHASE == 8) {
        unsigned long long* w = reinterpret_cast<unsigned long long*>(claim + 2);
        const unsigned long long old = atomicAdd(w + tid, (1ull << 40) | sum);
        if ((old >> 40) == gridDim.x - 1) {
            out[tid] = static_cast<unsigned>((old + sum) & ((1ull << 40) - 1));
            w[tid] = 0ull;
        }
        return;
    }
    if (PHASE == 10) {
        unsigned* ws = reinterpret_cast<unsigned*>(claim + 2 + 256);
        unsigned* tk = ws + 256;
        __shared__ bool last;
        if (sum) atomicAdd(ws + tid, sum);
        __syncthreads();
        if (tid == 0) {
            unsigned old;
            asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], 1;" : "=r"(old) : "l"(tk) : "memory");
            last = old == gridDim.x - 1;
        }
        __syncthreads();
        if (!last) return;
        out[tid] = __ldcg(ws + tid);
        ws[tid] = 0u;
        if (tid == 0) *tk = 0u;
        return;
    }
    if (PHASE == 11 || PHASE == 12) {
        if (tid == 0) {
            unsigned v;
            do { asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(ready) : "memory"); } while (v == 0u);
            atomicSub(ready, 1u);
        }
        __syncthreads();
        if (sum) atomicAdd(out + tid, sum);
        return;
    }
    if (PHASE == 6 || PHASE == 9) {
        if (tid == 0) while (ld_acquire(claim + 1) < epoch) {}
        __syncthreads();
    } else {
        cudaGridDependencySynchronize();
    }
    if (sum) atomicAdd(out + tid, sum);
}
template <int PHASE, int COPIES>
__global__ void __launch_bounds__(256) zero_in_kernel(const uint4* __restrict__ d4, size_t nv, unsigned* out,
                                                      unsigned long long* claim, unsigned long long epoch) {
    zero_in_body<PHASE, COPIES>(d4, nv, out, claim, epoch);
}
struct BigParams {
    unsigned long long pad[96];  // 768 bytes, about the library's Params
};
__global__ void __launch_bounds__(256) big_param_kernel(const uint4* __restrict__ d4, size_t nv, unsigned* out,
                                                        unsigned long long* claim, const BigParams bp) {
    // Same as PHASE 11, with a large parameter block (read once, so that it is not optimised away).
    if (bp.pad[threadIdx.x & 63] == 0xFFFFFFFFFFFFull) out[0] = 1u;
    zero_in_body<11, 8>(d4, nv, out, claim, 0ull);
}
__global__ void zero_out_kernel(unsigned* out) {
    out[threadIdx.x] = 0u;
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
    unsigned long long* claim;
    CK(cudaMalloc(&out, 4096)); CK(cudaMalloc(&ws, 4096)); CK(cudaMalloc(&partial, 4 << 20)); CK(cudaMalloc(&ticket, 4)); CK(cudaMalloc(&sink, 4));
    CK(cudaMalloc(&claim, 8192)); CK(cudaMemset(claim, 0, 8192));
    CK(cudaMemset(ticket, 0, 4)); CK(cudaMemset(ws, 0, 4096));
    const size_t cap = (size_t)7680 * 4320;
    uint8_t* d; CK(cudaMalloc(&d, cap));
    std::mt19937 rng(3);
    std::vector<uint8_t> h(cap);
    for (auto& x : h) x = rng() & 255;
    CK(cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice));
    unsigned long long epoch = 0;
    printf("empty kernel %.2f us\n", time_op([&] { empty_kernel<<<1, 32, 0, st>>>(); }, st));
    printf("memset 1 KiB %.2f us\n", time_op([&] { CK(cudaMemsetAsync(out, 0, 1024, st)); }, st));
    for (size_t n : {(size_t)640 * 480, (size_t)1920 * 1080, (size_t)3840 * 2160, cap}) {
        const size_t nv = n / 16;
        std::vector<unsigned> ref(256, 0);
        for (size_t i = 0; i < nv * 16; ++i) ref[h[i]]++;
        const double tr = time_op([&] { int blocks = std::max<size_t>(1, std::min<size_t>(prop.multiProcessorCount * 8, (nv + 255) / 256));
            read_limit_kernel<<<blocks, 256, 0, st>>>((const uint4*)d, nv, sink); }, st);
        // CUB on the same bytes (256 bins over [0, 256)), temporary storage allocated once.
        int* cub_out; CK(cudaMalloc(&cub_out, 257 * 4));
        size_t tb = 0;
        CK(cub::DeviceHistogram::HistogramEven(nullptr, tb, d, cub_out, 257, 0, 256, (int)(nv * 16), st));
        void* tmp; CK(cudaMalloc(&tmp, tb));
        const double tc = time_op([&] { CK(cub::DeviceHistogram::HistogramEven(tmp, tb, d, cub_out, 257, 0, 256, (int)(nv * 16), st)); }, st);
        std::vector<int> gc(256);
        CK(cudaMemcpy(gc.data(), cub_out, 1024, cudaMemcpyDeviceToHost));
        const bool okc = std::equal(gc.begin(), gc.end(), ref.begin(), [](int a, unsigned b) { return (unsigned)a == b; });
        CK(cudaFree(tmp)); CK(cudaFree(cub_out));
        printf("n=%zu read %.2f | CUB %.2f%s\n", n, tr, tc, okc ? "" : "(WRONG)");
        for (int kb : {4, 8, 16, 32, 64}) {
            const int B = (int)std::max<size_t>(1, n / (kb * 1024));
            if (B > 4 * prop.multiProcessorCount * 8) continue;
            if (B > 1024 && kb < 16) continue;
            auto L = [&](auto kern) { kern<<<B, 256, 0, st>>>((const uint4*)d, nv, out, ws, partial, ticket, sink); };
            std::vector<unsigned> got(256);
            auto check = [&] { CK(cudaMemcpy(got.data(), out, 1024, cudaMemcpyDeviceToHost)); return got == ref ? "" : "(WRONG)"; };
            const double t1 = time_op([&] { L(var_kernel<1, 8>); }, st);
            const double t2 = time_op([&] { L(var_kernel<2, 8>); }, st);
            CK(cudaMemset(ws, 0, 4096));
            CK(cudaMemset(out, 0xFF, 1024));
            const double t3 = time_op([&] { L(var_kernel<3, 8>); }, st);
            const char* ok3 = check();
            CK(cudaMemset(out, 0xFF, 1024));
            const double t5 = time_op([&] { CK(cudaMemsetAsync(out, 0, 1024, st)); L(var_kernel<5, 8>); }, st);
            const char* ok5 = check();
            CK(cudaMemset(out, 0xFF, 1024));
            const double t6 = time_op([&] { zero_in_kernel<6, 8><<<B, 256, 0, st>>>((const uint4*)d, nv, out, claim, ++epoch); }, st);
            const char* ok6 = check();
            CK(cudaMemset(out, 0xFF, 1024));
            const double t7 = time_op([&] {
                zero_out_kernel<<<1, 256, 0, st>>>(out);
                cudaLaunchConfig_t cfg{};
                cfg.gridDim = dim3(B); cfg.blockDim = dim3(256); cfg.stream = st;
                cudaLaunchAttribute at[1];
                at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
                at[0].val.programmaticStreamSerializationAllowed = 1;
                cfg.attrs = at; cfg.numAttrs = 1;
                CK(cudaLaunchKernelEx(&cfg, zero_in_kernel<7, 8>, (const uint4*)d, nv, out, claim, 0ull));
            }, st);
            const char* ok7 = check();
            CK(cudaMemset(out, 0xFF, 1024));
            const double t8 = time_op([&] { zero_in_kernel<8, 8><<<B, 256, 0, st>>>((const uint4*)d, nv, out, claim, 0ull); }, st);
            const char* ok8 = check();
            CK(cudaMemset(out, 0xFF, 1024));
            const bool resident = B <= prop.multiProcessorCount * 4;
            const double t9 = resident ? time_op([&] { zero_in_kernel<9, 8><<<B, 256, 0, st>>>((const uint4*)d, nv, out, claim, ++epoch); }, st) : 0.0;
            const char* ok9 = resident ? check() : "(not run)";
            CK(cudaMemset(out, 0xFF, 1024));
            const double t10 = time_op([&] { zero_in_kernel<10, 8><<<B, 256, 0, st>>>((const uint4*)d, nv, out, claim, 0ull); }, st);
            const char* ok10 = check();
            CK(cudaMemset(out, 0xFF, 1024));
            const double t11 = time_op([&] { zero_in_kernel<11, 8><<<B, 256, 0, st>>>((const uint4*)d, nv, out, claim, 0ull); }, st);
            const char* ok11 = check();
            CK(cudaMemset(out, 0xFF, 1024));
            const double t12 = resident ? time_op([&] { zero_in_kernel<12, 8><<<B, 256, 0, st>>>((const uint4*)d, nv, out, claim, 0ull); }, st) : 0.0;
            const char* ok12 = resident ? check() : "(not run)";
            CK(cudaMemset(out, 0xFF, 1024));
            BigParams bp{};
            const double t13 = time_op([&] { big_param_kernel<<<B, 256, 0, st>>>((const uint4*)d, nv, out, claim, bp); }, st);
            const char* ok13 = check();
            printf("  %2d KiB/block: first arrival zeroes + 768-byte parameters %.2f%s\n", kb, t13, ok13);
            printf("  %2d KiB/block (%5d blocks): count %.2f | +atomic flush %.2f | ticket (library) %.2f%s | memset+atomic-out %.2f%s | zero-in-launch %.2f%s | PDL zero kernel %.2f%s | per-bin tickets %.2f%s | block-0 zeroes %.2f%s | acq_rel ticket %.2f%s | first arrival zeroes, no epoch %.2f%s | block 0 zeroes, no epoch %.2f%s\n",
                   kb, B, t1, t2, t3, ok3, t5, ok5, t6, ok6, t7, ok7, t8, ok8, t9, ok9, t10, ok10, t11, ok11, t12, ok12);
        }
    }
    return 0;
}
