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

// In device code use the CUDA intrinsics (__popcll, __clzll, __ffsll, __brev), not C++20 <bit>:
// with nvcc 13.0 and libstdc++ 12, std::popcount, std::countr_zero, std::countl_zero,
// std::bit_width, std::has_single_bit and std::bit_ceil called from a kernel (allowed by
// --expt-relaxed-constexpr) compile without a diagnostic to a constant that ignores the argument
// (seen in the PTX; libstdc++ implements them with GCC builtins, which nvcc rejects when called
// directly from device code). Host code, including the host branch of VEIL_HD functions, uses <bit>.
#if defined(__CUDA_ARCH__)
#define VEIL_DEVICE_CODE 1
#else
#define VEIL_DEVICE_CODE 0
#endif
