// VEIL_HD marks functions that run on both the host and a CUDA device.
// Under nvcc it is `__host__ __device__`; under a plain C++ compiler it is empty.
#pragma once

#if defined(__CUDACC__)
#define VEIL_HD __host__ __device__ __forceinline__
#define VEIL_HD_NOINLINE __host__ __device__
#else
#define VEIL_HD inline
#define VEIL_HD_NOINLINE
#endif

// A lambda usable as a for_each body on both backends (nvcc --extended-lambda).
#if defined(__CUDACC__)
#define VEIL_LAMBDA [=] __host__ __device__
#else
#define VEIL_LAMBDA [=]
#endif

#if defined(__CUDA_ARCH__)
#define VEIL_DEVICE_CODE 1
#else
#define VEIL_DEVICE_CODE 0
#endif
