#include "Microkernels.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/cuda_check.h"

namespace fuselens::ceilings {
namespace {

constexpr int kThreads = 256;

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = in[i];
    }
}

__global__ void read_kernel(const float4* __restrict__ in, std::size_t n, float* __restrict__ sink) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    float acc = 0.0f;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float4 v = in[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1234.5678f) *sink = acc;  // never true for the zero-filled input; keeps the loads
}

__global__ void l2_kernel(const float4* __restrict__ in, std::size_t n, int sweeps, float* __restrict__ sink) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int s = 0; s < sweeps; ++s) {
        for (std::size_t i = first; i < n; i += stride) {
            const float4 v = __ldcg(in + i);  // cache in L2 only
            acc += v.x + v.y + v.z + v.w;
        }
    }
    if (acc == 1234.5678f) *sink = acc;
}

constexpr int kChains = 16;

__global__ void fma_kernel(int iterations, float seed, float* __restrict__ sink) {
    float a[kChains];
#pragma unroll
    for (int c = 0; c < kChains; ++c) a[c] = seed + static_cast<float>(threadIdx.x + c);
    const float b = 0.999999f, d = 1e-7f;
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int c = 0; c < kChains; ++c) a[c] = fmaf(a[c], b, d);
    }
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < kChains; ++c) sum += a[c];
    if (sum == 1234.5678f) *sink = sum;
}

int sm_count() {
    int device = 0, sms = 0;
    FUSELENS_CUDA_CHECK(cudaGetDevice(&device));
    FUSELENS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
}

template <typename T>
struct DeviceArray {
    T* p = nullptr;
    explicit DeviceArray(std::size_t count) {
        FUSELENS_CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
        FUSELENS_CUDA_CHECK(cudaMemset(p, 0, count * sizeof(T)));
    }
    ~DeviceArray() { cudaFree(p); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
};

struct StreamContext {
    const float4* in = nullptr;
    float4* out = nullptr;
    std::size_t n = 0;
    float* sink = nullptr;
    unsigned blocks = 0;
    int sweeps = 0;
    int iterations = 0;
};

std::string format(const char* fmt, double a, double b = 0, double c = 0) {
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, fmt, a, b, c);
    return buffer;
}

}  // namespace

double median_ms(int repetitions, void (*launch)(void*), void* context) {
    cudaEvent_t start = nullptr, stop = nullptr;
    FUSELENS_CUDA_CHECK(cudaEventCreate(&start));
    FUSELENS_CUDA_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < 3; ++i) launch(context);
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> times;
    for (int i = 0; i < std::max(1, repetitions); ++i) {
        FUSELENS_CUDA_CHECK(cudaEventRecord(start));
        launch(context);
        FUSELENS_CUDA_CHECK(cudaEventRecord(stop));
        FUSELENS_CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        FUSELENS_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

Measurement dram_copy_bandwidth(const MicrokernelOptions& o) {
    const std::size_t n = o.dram_bytes / sizeof(float4);
    DeviceArray<float4> in(n), out(n);
    StreamContext ctx{in.p, out.p, n, nullptr, static_cast<unsigned>(sm_count() * 16), 0, 0};
    const double ms = median_ms(o.repetitions, [](void* p) {
        auto* c = static_cast<StreamContext*>(p);
        copy_kernel<<<c->blocks, kThreads>>>(c->in, c->out, c->n);
        FUSELENS_CUDA_CHECK_LAST();
    }, &ctx);
    const double bytes = 2.0 * static_cast<double>(n * sizeof(float4));
    return {bytes / (ms * 1e-3),
            format("float4 copy kernel, 2 x %.0f MiB (read + write bytes), median of %.0f launches, %.3f ms",
                   static_cast<double>(o.dram_bytes >> 20), o.repetitions, ms)};
}

Measurement dram_read_bandwidth(const MicrokernelOptions& o) {
    const std::size_t n = o.dram_bytes / sizeof(float4);
    DeviceArray<float4> in(n);
    DeviceArray<float> sink(1);
    StreamContext ctx{in.p, nullptr, n, sink.p, static_cast<unsigned>(sm_count() * 16), 0, 0};
    const double ms = median_ms(o.repetitions, [](void* p) {
        auto* c = static_cast<StreamContext*>(p);
        read_kernel<<<c->blocks, kThreads>>>(c->in, c->n, c->sink);
        FUSELENS_CUDA_CHECK_LAST();
    }, &ctx);
    const double bytes = static_cast<double>(n * sizeof(float4));
    return {bytes / (ms * 1e-3), format("float4 read-only sum kernel over %.0f MiB, median of %.0f launches, %.3f ms",
                                        static_cast<double>(o.dram_bytes >> 20), o.repetitions, ms)};
}

Measurement l2_read_bandwidth(const MicrokernelOptions& o) {
    const std::size_t n = o.l2_bytes / sizeof(float4);
    DeviceArray<float4> in(n);
    DeviceArray<float> sink(1);
    const int sweeps = 200;
    StreamContext ctx{in.p, nullptr, n, sink.p, static_cast<unsigned>(sm_count() * 8), sweeps, 0};
    const double ms = median_ms(o.repetitions, [](void* p) {
        auto* c = static_cast<StreamContext*>(p);
        l2_kernel<<<c->blocks, kThreads>>>(c->in, c->n, c->sweeps, c->sink);
        FUSELENS_CUDA_CHECK_LAST();
    }, &ctx);
    const double bytes = static_cast<double>(sweeps) * static_cast<double>(n * sizeof(float4));
    return {bytes / (ms * 1e-3), format("float4 __ldcg sweeps over a %.0f MiB L2-resident buffer, %.0f sweeps "
                                        "per launch, %.3f ms (median)",
                                        static_cast<double>(o.l2_bytes >> 20), sweeps, ms)};
}

Measurement fp32_fma_rate(const MicrokernelOptions& o) {
    DeviceArray<float> sink(1);
    const int iterations = 4096;
    StreamContext ctx{nullptr, nullptr, 0, sink.p, static_cast<unsigned>(sm_count() * 8), 0, iterations};
    const double ms = median_ms(o.repetitions, [](void* p) {
        auto* c = static_cast<StreamContext*>(p);
        fma_kernel<<<c->blocks, kThreads>>>(c->iterations, 0.5f, c->sink);
        FUSELENS_CUDA_CHECK_LAST();
    }, &ctx);
    const double flops = 2.0 * kChains * iterations * static_cast<double>(ctx.blocks) * kThreads;
    return {flops / (ms * 1e-3), format("%.0f independent FFMA chains per thread, %.0f blocks x 256 threads, "
                                        "%.3f ms (median)", kChains, ctx.blocks, ms)};
}

}  // namespace fuselens::ceilings
