// Internal to rns/ and the key switching's ModUp (rlwe/keyswitch.cpp): RNS base conversion on the
// tensor cores, for 32-bit words whose conversion table exists in Montgomery form (the lazy rows'
// tables, mont32_lazy_fits). CUDA only (included under __CUDACC__); nothing here touches the CUDA
// runtime.
//
// The conversion as an integer matrix product on 8-bit operands (TensorFHE, Fan et al., arXiv
// 2212.14191, §4). For an output row r (prime p), out_r = sum_i y_i T(r, i) mod p, with the
// scaled inputs y_i < 2^31 (block_inputs) and the table in Montgomery form T(r, i) = M(r, i) 2^32
// mod p. Each y_i splits into bytes y_i = sum_a y_{i,a} 2^{8a}; the shifts fold into the table,
// T_a(r, i) = T(r, i) 2^{8a} mod p, and each table word splits into bytes
// T_a = sum_b T_{a,b} 2^{8b}, so that
//   out_r 2^32 = sum_b 2^{8b} C_b(r)  (mod p),   C_b(r) = sum_{a, i} T_{a,b}(r, i) y_{i,a}:
// four u8 x u8 -> s32 products of [rows x 64] by [64 x coefficients] (k = 16 a + i, i < 16,
// zero-padded). Each C_b is below 64 * 255^2 < 2^22 (no s32 overflow), and the sum
// sum_{a,i} T_a(r, i) y_{i,a} is below 64 * 255 * p < p 2^32, so one REDC (Montgomery, Math. Comp.
// 1985; redc32) gives the canonical residue: the same words as the other conversion kernels. The
// kernel needs sm_80 or later (tc_supported) and 8-byte aligned output limbs.
#pragma once
#if defined(__CUDACC__)
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "veil/backend/device.h"
#include "veil/core/modarith.h"
#include "veil/rns/conv_kernels.h"

namespace veil::rns_detail {

inline constexpr unsigned kTcThreads = 128;  // 4 warps: rows [0, 64) of a block
inline constexpr u32 kTcCoeffs = 128;        // coefficients a block stages per tile
inline constexpr u32 kTcRowBytes = 80;       // a staged coefficient's 64 bytes, padded: the
                                             // B-fragment loads of 8 x 4 lanes hit 32 banks

/// d += a b on the tensor cores: mma.sync m16n8k32, u8 x u8 -> s32 (sm_80 and later; PTX ISA,
/// "Matrix fragments for mma.m16n8k32"): a holds row g (registers 0, 2) and g + 8 (1, 3) of the
/// 16 x 32 A tile at columns 4 t..4 t + 3 (+ 16 in registers 2, 3), b column g of the 32 x 8 B
/// tile at rows 4 t..4 t + 3 (+ 16), d rows g, g + 8 at columns 2 t, 2 t + 1 (g = lane / 4,
/// t = lane % 4).
__device__ __forceinline__ void mma_u8_m16n8k32(int (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  (void)d, (void)a, (void)b0, (void)b1;
  __trap();
#endif
}

/// The 4 x 4 byte transpose: out[b] = byte b of w0, w1, w2, w3 (w0's in the lowest byte).
__device__ __forceinline__ void bytes_transpose(u32 w0, u32 w1, u32 w2, u32 w3, u32 (&out)[4]) {
  const u32 t0 = __byte_perm(w0, w1, 0x5140), t1 = __byte_perm(w0, w1, 0x7362);
  const u32 t2 = __byte_perm(w2, w3, 0x5140), t3 = __byte_perm(w2, w3, 0x7362);
  out[0] = __byte_perm(t0, t2, 0x5410);
  out[1] = __byte_perm(t0, t2, 0x7632);
  out[2] = __byte_perm(t1, t3, 0x5410);
  out[3] = __byte_perm(t1, t3, 0x7632);
}

/// One block of the tensor-core conversion: kTiles * kTcCoeffs coefficients of the inputs of group
/// y = blockIdx.y (a ModUp digit, or a polynomial and a range of 64 output rows), with the rows
/// given by R:
///   view(y), poly(y), first(y): block_inputs' view, polynomial and first input limb;
///   rows(y) (<= 64), stride() (the table's row length, <= 16, zero-padded);
///   table_row(y, r): row r's table words in Montgomery form; modulus(y, r); out_row(y, r): row
///   r's output limb (coefficient 0).
/// The block stages its coefficients' 64 input bytes in shared memory (kTiles coefficients a
/// thread); warp w multiplies rows [16 w, 16 w + 16) and finishes its outputs in registers. Each
/// thread builds its own A fragments (the bytes of T_a(r, i) for its two rows and four i) from the
/// table, T_a = T_{a-1} 2^8 by one REDC with 2^40 mod p: no table in shared memory, so many small
/// blocks stay resident and hide the inputs' load latency.
template <u32 kMax, class R, u32 kTiles = 1>
__global__ void __launch_bounds__(kTcThreads) tc_convert_kernel(const R rows_of, u32 n) {
  __shared__ __align__(16) unsigned char sb[kTiles * kTcCoeffs][kTcRowBytes];
  const u32 y = blockIdx.y, c0 = blockIdx.x * kTiles * kTcCoeffs;
  const u32 stride = rows_of.stride(), rows = rows_of.rows(y);
#pragma unroll
  for (u32 tile = 0; tile < kTiles; ++tile) {
    // stage: coefficient cc, word 4 a + q = byte a of y_{4q}, ..., y_{4q+3}
    const u32 cc = tile * kTcCoeffs + threadIdx.x;
    u32 x[1][kMax] = {};
    block_inputs<u32, kMax, 1>(rows_of.view(y), rows_of.in, rows_of.poly(y), rows_of.first(y),
                               c0 + cc, n, stride / 4, x);
    u32 w[4][4];  // [q][a]
#pragma unroll
    for (u32 q = 0; q < 4; ++q) {
      if (4 * q < kMax) {
        bytes_transpose(x[0][(4 * q) % kMax], x[0][(4 * q + 1) % kMax], x[0][(4 * q + 2) % kMax],
                        x[0][(4 * q + 3) % kMax], w[q]);
      } else {
        w[q][0] = w[q][1] = w[q][2] = w[q][3] = 0;
      }
    }
    uint4* dst = reinterpret_cast<uint4*>(sb[cc]);
#pragma unroll
    for (u32 a = 0; a < 4; ++a) dst[a] = make_uint4(w[0][a], w[1][a], w[2][a], w[3][a]);
  }
  const u32 warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
  const u32 r0 = 16 * warp + g, r1 = r0 + 8;
  u32 af[4][2][4];  // [b][k-step s][register]: registers 0/2 row r0, 1/3 row r1; a = 2 s + reg / 2
  Mont32 m[2] = {};
  if (16 * warp < rows) {
#pragma unroll
    for (u32 h = 0; h < 2; ++h) {
      const u32 r = h ? r1 : r0;
      u32 t[4] = {0, 0, 0, 0};  // T(r, 4 tq + u)
      if (r < rows) {
        m[h] = mont32_of(rows_of.modulus(y, r));
        const u32* row = rows_of.table_row(y, r);
#pragma unroll
        for (u32 u = 0; u < 4; ++u) t[u] = 4 * tq + u < stride ? row[4 * tq + u] : 0u;
      }
      u32 c = m[h].r32;  // 2^40 mod p, by eight doublings of 2^32 mod p
#pragma unroll
      for (int d = 0; d < 8; ++d) {
        c <<= 1;
        c = c >= m[h].p ? c - m[h].p : c;
      }
#pragma unroll
      for (u32 a = 0; a < 4; ++a) {
        u32 bt[4];
        bytes_transpose(t[0], t[1], t[2], t[3], bt);
#pragma unroll
        for (u32 b = 0; b < 4; ++b) af[b][a / 2][2 * (a % 2) + h] = bt[b];
        if (a < 3 && r < rows) {
#pragma unroll
          for (u32 u = 0; u < 4; ++u) t[u] = redc32(mad_wide(t[u], c, 0), m[h]);  // T 2^8
        }
      }
    }
  }
  __syncthreads();
  if (16 * warp >= rows) return;
  u32* out0 = r0 < rows ? rows_of.out_row(y, r0) + c0 : nullptr;
  u32* out1 = r1 < rows ? rows_of.out_row(y, r1) + c0 : nullptr;
#pragma unroll 2
  for (u32 nt = 0; nt < kTiles * kTcCoeffs / 8; ++nt) {
    const unsigned char* brow = sb[nt * 8 + g];
    int acc[4][4] = {};
#pragma unroll
    for (u32 s = 0; s < 2; ++s) {
      const u32 b0 = *reinterpret_cast<const u32*>(brow + 32 * s + 4 * tq);
      const u32 b1 = *reinterpret_cast<const u32*>(brow + 32 * s + 16 + 4 * tq);
#pragma unroll
      for (u32 b = 0; b < 4; ++b) mma_u8_m16n8k32(acc[b], af[b][s], b0, b1);
    }
    u32 v[4];
#pragma unroll
    for (u32 e = 0; e < 4; ++e) {  // element e: row e < 2 ? r0 : r1, coefficient 2 tq + e % 2
      const u32 lo = static_cast<u32>(acc[0][e]) + (static_cast<u32>(acc[1][e]) << 8);
      const u32 hi = static_cast<u32>(acc[2][e]) + (static_cast<u32>(acc[3][e]) << 8);
      v[e] = redc32(mad_wide(hi, 1u << 16, lo), m[e / 2]);
    }
    const u32 col = nt * 8 + 2 * tq;
    if (out0) *reinterpret_cast<uint2*>(out0 + col) = make_uint2(v[0], v[1]);
    if (out1) *reinterpret_cast<uint2*>(out1 + col) = make_uint2(v[2], v[3]);
  }
}

/// Whether `dev` runs the u8 mma.sync of tc_convert_kernel (compute capability 8.0 or later),
/// asked of the runtime once per device.
/// @param dev a CUDA device.
/// @return true on sm_80 and later.
inline bool tc_supported(const Device& dev) {
  static std::atomic<int> known[64] = {};  // 0 unknown, 1 no, 2 yes
  if (dev.index < 0 || dev.index >= 64) return false;
  int k = known[dev.index].load(std::memory_order_relaxed);
  if (k == 0) {
    k = cuda_device_info(dev.index).compute_major >= 8 ? 2 : 1;
    known[dev.index].store(k, std::memory_order_relaxed);
  }
  return k == 2;
}

/// Runs launch(std::integral_constant<u32, kTiles>) with the tiles a block takes:
/// conversion_tc_tiles() (1, 2 or 4), fewer where N has fewer tiles of kTcCoeffs.
template <class Launch>
void with_tc_tiles(std::size_t n, Launch launch) {
  std::size_t tiles = static_cast<std::size_t>(conversion_tc_tiles());
  while (tiles > 1 && n % (tiles * kTcCoeffs) != 0) tiles /= 2;
  if (tiles >= 4) {
    launch(std::integral_constant<u32, 4>{});
  } else if (tiles == 2) {
    launch(std::integral_constant<u32, 2>{});
  } else {
    launch(std::integral_constant<u32, 1>{});
  }
}

}  // namespace veil::rns_detail
#endif
