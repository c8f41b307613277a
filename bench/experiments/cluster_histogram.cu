// Experiment (not part of the build): an 8-bit histogram for small images whose blocks merge their counts
// through a thread-block cluster's distributed shared memory instead of global atomics and a last-block
// ticket, against CUB and a read-only kernel on the same buffers. cG gN: clusters of G blocks, N clusters
// (N > 1 merges the clusters' partial counts through a ticket). Conclusions: docs/DESIGN.md (decision
// records of the histogram kernels); raw outputs: git log -- docs/results.
// Build and run on a Hopper GPU:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cluster_histogram bench/experiments/cluster_histogram.cu && ./cluster_histogram
#include <cooperative_groups.h>
#include <cub/device/device_histogram.cuh>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <random>
namespace cg = cooperative_groups;
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

__device__ __forceinline__ void sinc(unsigned addr) { asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(addr)); }

// COPIES privatized copies; slot s of channel c copy k at ((c*256+s)*COPIES + k).
template <int C, int COPIES>
__device__ __forceinline__ void count_vec(const uint4& q, int phase, unsigned lane_base) {
    const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < 16; ++k) {
        int c = (phase + k) % C;
        unsigned v = __byte_perm(w[k >> 2], 0u, 0x4440u | (k & 3));
        sinc(lane_base + ((unsigned)c * 256u + v) * (COPIES * 4u));
    }
}

template <int C, int COPIES, int CS>
__global__ void __launch_bounds__(1024, 1) cluster_hist(const uint8_t* __restrict__ data, size_t n, unsigned* out,
                                                        unsigned* partial, unsigned* ticket) {
    extern __shared__ unsigned sm[];
    cg::cluster_group cl = cg::this_cluster();
    const unsigned tid = threadIdx.x, nt = blockDim.x;
    constexpr int SLOTS = C * 256;
    for (unsigned i = tid; i < SLOTS * COPIES; i += nt) sm[i] = 0u;
    __syncthreads();
    const unsigned lane_base = (unsigned)__cvta_generic_to_shared(sm) + 4u * (tid & (COPIES - 1));
    const size_t nv = n / 16;
    const size_t b = blockIdx.x, B = gridDim.x;
    const size_t v0 = nv * b / B, v1 = nv * (b + 1) / B;
    const uint4* d4 = reinterpret_cast<const uint4*>(data);
    size_t i = v0 + tid;
    for (; i + 3 * nt < v1; i += 4 * nt) {
        uint4 q0 = __ldg(d4 + i), q1 = __ldg(d4 + i + nt), q2 = __ldg(d4 + i + 2 * nt), q3 = __ldg(d4 + i + 3 * nt);
        count_vec<C, COPIES>(q0, (int)((i * 16) % C), lane_base);
        count_vec<C, COPIES>(q1, (int)(((i + nt) * 16) % C), lane_base);
        count_vec<C, COPIES>(q2, (int)(((i + 2 * nt) * 16) % C), lane_base);
        count_vec<C, COPIES>(q3, (int)(((i + 3 * nt) * 16) % C), lane_base);
    }
    for (; i < v1; i += nt) count_vec<C, COPIES>(__ldg(d4 + i), (int)((i * 16) % C), lane_base);
    if (b == B - 1) {
        for (size_t j = nv * 16 + tid; j < n; j += nt) sinc(lane_base + ((unsigned)(j % C) * 256u + data[j]) * (COPIES * 4u));
    }
    __syncthreads();
    for (unsigned s = tid; s < SLOTS; s += nt) {
        unsigned sum = 0;
#pragma unroll
        for (int k = 0; k < COPIES; ++k) sum += sm[s * COPIES + ((k + s) & (COPIES - 1))];
        sm[s * COPIES] = sum;
    }
    cl.sync();
    const unsigned r = cl.block_rank();
    constexpr int PER = SLOTS / CS;
    const unsigned G = gridDim.x / CS, g = blockIdx.x / CS;
    for (unsigned j = tid; j < PER * CS; j += nt) {
        const unsigned slot = r * PER + j / CS, src = j % CS;
        const unsigned* rs = cl.map_shared_rank(sm, src);
        unsigned v = rs[slot * COPIES];
#pragma unroll
        for (int o = CS / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o, CS);
        if (src == 0) {
            if (G == 1) out[slot] = v;
            else partial[g * SLOTS + slot] = v;
        }
    }
    cl.sync();  // keep this block's shared memory alive until every remote read of it is done
    if (G == 1) return;
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (tid == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    for (unsigned s = tid; s < SLOTS; s += nt) {
        unsigned v = 0;
        for (unsigned k = 0; k < G; ++k) v += __ldcg(partial + k * SLOTS + s);
        out[s] = v;
    }
    if (tid == 0) *ticket = 0u;
}

template <int C, int COPIES, int CS>
void launch_cluster(const uint8_t* d, size_t n, unsigned* out, unsigned* partial, unsigned* ticket, int G, int threads, cudaStream_t st) {
    auto fn = cluster_hist<C, COPIES, CS>;
    static bool init = false;
    const size_t smem = (size_t)C * 256 * COPIES * 4;
    if (!init) {
        if (CS > 8) CK(cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        if (smem > 48 * 1024) CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        init = true;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(G * CS);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = CS; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, fn, d, n, out, partial, ticket));
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
    int dev = 0; cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, dev));
    printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    struct Sz { const char* name; size_t px; } sizes[] = {{"640x480", 640 * 480}, {"1080p", 1920 * 1080}, {"4K", 3840 * 2160}, {"8K", 7680 * 4320}};
    const char* datas[] = {"uniform", "photo", "const"};
    unsigned *out, *partial, *ticket, *sink, *cubout;
    CK(cudaMalloc(&out, 4 * 1024 * 4)); CK(cudaMalloc(&cubout, 4 * 1024 * 4)); CK(cudaMalloc(&partial, 4 * 1024 * 1024)); CK(cudaMalloc(&ticket, 4)); CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(ticket, 0, 4));
    uint8_t* d; const size_t maxb = (size_t)7680 * 4320 * 3 + 64; CK(cudaMalloc(&d, maxb));
    void* temp = nullptr; size_t temp_bytes = 0;
    std::mt19937 rng(1);
    for (int C : {1, 3}) for (auto& sz : sizes) for (const char* dn : datas) {
        if (C == 3 && sz.px > 3840 * 2160) continue;
        const size_t n = sz.px * C;
        std::vector<uint8_t> h(n);
        for (size_t i = 0; i < n; ++i) {
            if (dn[0] == 'u') h[i] = rng() & 255;
            else if (dn[0] == 'c') h[i] = 77;
            else { size_t p = i / C; int x = p % 1920, y = (p / 1920) % 1080; h[i] = (uint8_t)std::min(255, std::max(0, (int)((x + y) / 12 + 40 + (int)(rng() % 9) - 4 + (int)(i % C) * 20))); }
        }
        CK(cudaMemcpy(d, h.data(), n, cudaMemcpyHostToDevice));
        std::vector<unsigned> ref(C * 256, 0);
        for (size_t i = 0; i < n; ++i) ref[(i % C) * 256 + h[i]]++;
        const double t_read = time_op([&] { int blocks = prop.multiProcessorCount * 8; blocks = std::max<size_t>(1, std::min<size_t>(blocks, (n / 16 + 255) / 256));
            read_limit_kernel<<<blocks, 256, 0, st>>>((const uint4*)d, n / 16, sink); }, st);
        // CUB
        double t_cub = -1;
        {
            size_t need = 0;
            if (C == 1) cub::DeviceHistogram::HistogramEven(nullptr, need, d, cubout, 257, 0, 256, (int)n, st);
            else { int lv[3] = {257, 257, 257}, lo[3] = {0, 0, 0}, hi[3] = {256, 256, 256}; unsigned* hs[3] = {cubout, cubout + 256, cubout + 512};
                cub::DeviceHistogram::MultiHistogramEven<3, 3>(nullptr, need, d, hs, lv, lo, hi, (int)sz.px, st); }
            if (need > temp_bytes) { cudaFree(temp); CK(cudaMalloc(&temp, need)); temp_bytes = need; }
            t_cub = time_op([&] {
                size_t tb = temp_bytes;
                if (C == 1) cub::DeviceHistogram::HistogramEven(temp, tb, d, cubout, 257, 0, 256, (int)n, st);
                else { int lv[3] = {257, 257, 257}, lo[3] = {0, 0, 0}, hi[3] = {256, 256, 256}; unsigned* hs[3] = {cubout, cubout + 256, cubout + 512};
                    cub::DeviceHistogram::MultiHistogramEven<3, 3>(temp, tb, d, hs, lv, lo, hi, (int)sz.px, st); } }, st);
        }
        printf("C%d %-8s %-7s read %6.2f us  CUB %6.2f us |", C, sz.name, dn, t_read, t_cub);
        auto check_and_time = [&](const char* label, auto launch) {
            CK(cudaMemset(out, 0xff, C * 256 * 4));
            launch(); CK(cudaStreamSynchronize(st));
            std::vector<unsigned> got(C * 256); CK(cudaMemcpy(got.data(), out, C * 256 * 4, cudaMemcpyDeviceToHost));
            bool ok = got == ref;
            const double t = time_op(launch, st);
            launch(); CK(cudaStreamSynchronize(st)); CK(cudaMemcpy(got.data(), out, C * 256 * 4, cudaMemcpyDeviceToHost));
            ok = ok && got == ref;
            printf(" %s %.2f%s", label, t, ok ? "" : "(WRONG)");
        };
        for (int G : {1, 2, 4, 8}) {
            if (G * 16 > prop.multiProcessorCount) continue;
            char lab[32];
            snprintf(lab, sizeof lab, "c16g%d", G);
            if (C == 1) check_and_time(lab, [&] { launch_cluster<1, 8, 16>(d, n, out, partial, ticket, G, 1024, st); });
            else check_and_time(lab, [&] { launch_cluster<3, 8, 16>(d, n, out, partial, ticket, G, 1024, st); });
        }
        for (int G : {1, 4, 16}) {
            char lab[32];
            snprintf(lab, sizeof lab, "c8g%d", G);
            if (C == 1) check_and_time(lab, [&] { launch_cluster<1, 8, 8>(d, n, out, partial, ticket, G, 1024, st); });
            else check_and_time(lab, [&] { launch_cluster<3, 8, 8>(d, n, out, partial, ticket, G, 1024, st); });
        }
        if (C == 1) {
            check_and_time("c16g1x16cp", [&] { launch_cluster<1, 16, 16>(d, n, out, partial, ticket, 1, 1024, st); });
            check_and_time("c16g1t512", [&] { launch_cluster<1, 8, 16>(d, n, out, partial, ticket, 1, 512, st); });
        }
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
