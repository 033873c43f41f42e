// cost of the CUDA API calls a level's set-up makes (warm), H200
#include <cstdio>
#include <chrono>
#include <cuda_runtime.h>
__global__ void k1(unsigned long long *w) { if (threadIdx.x == 0) w[0] += 1; }
static double now() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
#define T(name, ...) { for (int w = 0; w < 50; w++) { __VA_ARGS__; } cudaDeviceSynchronize(); double t0 = now(); for (int r = 0; r < 200; r++) { __VA_ARGS__; } cudaDeviceSynchronize(); printf("%-48s %7.2f us\n", name, (now() - t0) * 1e3 / 200); }
int main() {
    cudaFree(0);
    unsigned long long *d, h[3] = {0,0,0}; cudaMalloc(&d, 64);
    void *p; cudaStream_t s;
    T("launch (1 block) alone", k1<<<1, 32>>>(d));
    T("launch + cudaDeviceSynchronize", (k1<<<1, 32>>>(d), cudaDeviceSynchronize()));
    T("launch + cudaMemcpy D2H 24 B", (k1<<<1, 32>>>(d), cudaMemcpy(h, d, 24, cudaMemcpyDeviceToHost)));
    T("cudaMemcpy H2D 24 B (pageable)", cudaMemcpy(d, h, 24, cudaMemcpyHostToDevice));
    T("cudaMemset 24 B", cudaMemset(d, 0, 24));
    T("cudaMalloc 24 B + cudaFree", (cudaMalloc(&p, 24), cudaFree(p)));
    T("cudaMalloc 4 MB + cudaFree", (cudaMalloc(&p, 4 << 20), cudaFree(p)));
    T("cudaMalloc 64 MB + cudaFree", (cudaMalloc(&p, 64 << 20), cudaFree(p)));
    T("cudaMalloc 300 MB + cudaFree", (cudaMalloc(&p, 300 << 20), cudaFree(p)));
    T("cudaMallocAsync 64 MB + cudaFreeAsync + sync", (cudaMallocAsync(&p, 64 << 20, 0), cudaFreeAsync(p, 0), cudaStreamSynchronize(0)));
    T("cudaMallocAsync 24 B + cudaFreeAsync (legacy)", (cudaMallocAsync(&p, 24, 0), cudaFreeAsync(p, 0)));
    T("launch + cudaFree(small malloc'd before)", (cudaMalloc(&p, 24), k1<<<1,32>>>(d), cudaFree(p)));
    T("cudaStreamCreateWithFlags + Destroy", (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaStreamDestroy(s)));
    T("cudaGetLastError", cudaGetLastError());
    int dev; cudaDeviceProp pr;
    T("cudaGetDevice", cudaGetDevice(&dev));
    T("cudaGetDeviceProperties", cudaGetDeviceProperties(&pr, 0));
    size_t fr, to;
    T("cudaMemGetInfo", cudaMemGetInfo(&fr, &to));
    return 0;
}
