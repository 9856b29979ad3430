// Tests for veil/backend: Device parsing and identity, Buffer<T> on the CPU and on CUDA, and the
// CUDA pool limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "veil/backend/buffer.h"
#include "veil/backend/cluster.h"
#include "veil/backend/device.h"
#include "veil/backend/graph.h"
#include "veil/backend/memory.h"
#include "veil/core/error.h"

namespace {

using u64 = std::uint64_t;
using veil::Buffer;
using veil::Device;

std::vector<u64> pattern(std::size_t n, u64 salt) {
  std::vector<u64> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = (i + 1) * 0x9E3779B97F4A7C15ull ^ salt;
  return v;
}

bool has_gpu() { return veil::cuda_device_count() > 0; }

// ---- Device ---------------------------------------------------------------------------------

TEST(BackendTest, ParseCpu) {
  const Device d = Device::parse("cpu");
  EXPECT_TRUE(d.is_cpu());
  EXPECT_FALSE(d.is_cuda());
  EXPECT_EQ(d.kind, Device::Kind::cpu);
  EXPECT_EQ(d, Device::cpu());
  EXPECT_EQ(d.str(), "cpu");
}

TEST(BackendTest, ParseRejectsMalformedStrings) {
  for (const char* bad : {"gpu", "cuda:x", "cuda:-1", "", "CPU", "cpu:0", " cpu", "cpu ", "cuda:",
                          "cudax", "cuda0", "cuda:1x", "cuda:0:0", "cuda:99999999999999999999",
                          "tpu:0"}) {
    EXPECT_THROW(Device::parse(bad), veil::InvalidArgument) << "'" << bad << "'";
  }
}

TEST(BackendTest, ParseErrorNamesTheInput) {
  try {
    Device::parse("gpu");
    FAIL() << "no exception";
  } catch (const veil::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("gpu"), std::string::npos) << e.what();
  }
}

TEST(BackendTest, ParseCudaWithoutCudaBuild) {
  if (veil::cuda_built()) GTEST_SKIP() << "CUDA backend built";
  for (const char* text : {"cuda", "cuda:0", "cuda:1"}) {
    try {
      Device::parse(text);
      FAIL() << "no exception for " << text;
    } catch (const veil::RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      FAIL() << "expected RuntimeError for " << text << ", got: " << e.what();
    }
  }
  EXPECT_EQ(veil::cuda_device_count(), 0);
  EXPECT_THROW(veil::cuda_device_info(0), veil::RuntimeError);
  // CUDA buffers cannot be made either.
  EXPECT_THROW((void)Buffer<u64>(Device(Device::Kind::cuda, 0), 4), veil::RuntimeError);
}

TEST(BackendTest, ParseCudaWithCudaBuild) {
  if (!veil::cuda_built()) GTEST_SKIP() << "CPU-only build";
  const int count = veil::cuda_device_count();
  // An index past the last GPU is a RuntimeError (a valid string, an unavailable device).
  EXPECT_THROW(Device::parse("cuda:" + std::to_string(count)), veil::RuntimeError);
  if (count == 0) {
    EXPECT_THROW(Device::parse("cuda"), veil::RuntimeError);
    return;
  }
  const Device d = Device::parse("cuda");
  EXPECT_TRUE(d.is_cuda());
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(Device::parse("cuda:0"), d);
  EXPECT_EQ(Device::parse("cuda:" + std::to_string(count - 1)).index, count - 1);
  const veil::CudaDeviceInfo info = veil::cuda_device_info(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_GT(info.multiprocessors, 0);
}

TEST(BackendTest, CudaBuiltMatchesCompileDefinition) {
#if defined(VEIL_HAVE_CUDA)
  EXPECT_TRUE(veil::cuda_built());
#else
  EXPECT_FALSE(veil::cuda_built());
  EXPECT_EQ(veil::cuda_device_count(), 0);
#endif
  EXPECT_GE(veil::cuda_device_count(), 0);
}

TEST(BackendTest, DeviceIdentityAndNames) {
  const Device c0(Device::Kind::cuda, 0), c1(Device::Kind::cuda, 1);
  EXPECT_EQ(c0.str(), "cuda:0");
  EXPECT_EQ(c1.str(), "cuda:1");
  EXPECT_NE(c0, c1);
  EXPECT_NE(c0, Device::cpu());
  EXPECT_EQ(c1, Device(Device::Kind::cuda, 1));
  // The index means nothing for the CPU.
  EXPECT_EQ(Device(Device::Kind::cpu, 3), Device::cpu());
  EXPECT_EQ(Device().str(), "cpu");
}

TEST(BackendTest, NumThreads) {
  const int def = veil::num_threads();
  EXPECT_GE(def, 1);
  veil::set_num_threads(1);
  EXPECT_EQ(veil::num_threads(), 1);
  veil::set_num_threads(0);
  EXPECT_EQ(veil::num_threads(), def);
}

TEST(BackendTest, PoolLimitIsCudaOnly) {
  EXPECT_THROW(veil::backend::set_pool_limit(Device::cpu(), 1 << 20), veil::InvalidArgument);
  EXPECT_EQ(veil::backend::pool_limit(Device::cpu()), 0u);
}

// ---- Buffer on the CPU ----------------------------------------------------------------------

TEST(BackendTest, CpuBufferEmpty) {
  Buffer<u64> a;
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_TRUE(a.to_host().empty());
  Buffer<u64> b(Device::cpu(), 0);
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.clone().empty());
  b.zero();  // no-op, must not crash
  EXPECT_TRUE(Buffer<u64>::from_host(Device::cpu(), {}).empty());
}

TEST(BackendTest, CpuBufferRoundTrip) {
  const Device cpu = Device::cpu();
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1000), std::size_t(1) << 16}) {
    const std::vector<u64> host = pattern(n, n);
    Buffer<u64> a = Buffer<u64>::from_host(cpu, host);
    EXPECT_EQ(a.size(), n);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a.device(), cpu);
    ASSERT_NE(a.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % alignof(u64), 0u);
    EXPECT_EQ(a.to_host(), host);
    // Direct writes through data() are visible in to_host().
    a.data()[n - 1] = 12345;
    std::vector<u64> modified = host;
    modified[n - 1] = 12345;
    EXPECT_EQ(a.to_host(), modified);

    // clone / to() are deep copies.
    Buffer<u64> b = a.clone();
    Buffer<u64> c = a.to(cpu);
    EXPECT_NE(b.data(), a.data());
    EXPECT_NE(c.data(), a.data());
    EXPECT_EQ(b.to_host(), modified);
    EXPECT_EQ(c.to_host(), modified);
    b.data()[0] ^= 1;
    EXPECT_EQ(a.to_host(), modified);
    EXPECT_EQ(c.to_host(), modified);

    // zero() clears only this buffer.
    b.zero();
    EXPECT_EQ(b.to_host(), std::vector<u64>(n, 0));
    EXPECT_EQ(a.to_host(), modified);
  }
}

TEST(BackendTest, CpuBufferMoveSemantics) {
  const std::vector<u64> host = pattern(100, 1);
  Buffer<u64> a = Buffer<u64>::from_host(Device::cpu(), host);
  const u64* p = a.data();
  Buffer<u64> b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 100u);
  EXPECT_EQ(a.size(), 0u);      // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  Buffer<u64> c(Device::cpu(), 5);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.to_host(), host);
  c = Buffer<u64>();
  EXPECT_TRUE(c.empty());
}

TEST(BackendTest, CpuBytesInUseTracksBuffers) {
  const Device cpu = Device::cpu();
  const std::size_t before = veil::backend::bytes_in_use(cpu);
  {
    Buffer<u64> a(cpu, 1000);
    EXPECT_EQ(veil::backend::bytes_in_use(cpu), before + 8000);
    Buffer<std::uint32_t> b(cpu, 3);
    EXPECT_EQ(veil::backend::bytes_in_use(cpu), before + 8012);
  }
  EXPECT_EQ(veil::backend::bytes_in_use(cpu), before);
}

// The host cache hands a freed block of 64 KiB or more back to the next allocation of its
// size, keeps at most its limit, counts none of it as in use, and empties when the limit drops.
TEST(BackendTest, HostCacheReusesFreedBlocksWithinItsLimit) {
  const Device cpu = Device::cpu();
  const std::size_t old_limit = veil::backend::host_cache_limit();
  veil::backend::set_host_cache_limit(0);  // start empty
  veil::backend::set_host_cache_limit(std::size_t(1) << 20);
  const std::size_t big = 200 << 10, in_use = veil::backend::bytes_in_use(cpu);
  void* a = veil::backend::allocate(cpu, big);
  std::memset(a, 7, big);
  veil::backend::deallocate(cpu, a, big);
  EXPECT_EQ(veil::backend::host_cache_bytes(), big);
  EXPECT_EQ(veil::backend::bytes_in_use(cpu), in_use);
  void* b = veil::backend::allocate(cpu, big);
  EXPECT_EQ(b, a);  // the same block, by exact size
  EXPECT_EQ(veil::backend::host_cache_bytes(), 0u);
  void* c = veil::backend::allocate(cpu, big);  // nothing cached: a new block
  EXPECT_NE(c, a);
  veil::backend::zeroize(cpu, b, big);  // a secret buffer's fate: zeroized, then cached
  veil::backend::deallocate(cpu, b, big);
  veil::backend::deallocate(cpu, c, big);
  EXPECT_EQ(veil::backend::host_cache_bytes(), 2 * big);
  void* d = veil::backend::allocate(cpu, big);  // one of the two, zeros if it was b
  const auto* bytes = static_cast<const unsigned char*>(d);
  if (d == b) {
    EXPECT_EQ(std::count(bytes, bytes + big, 0), static_cast<std::ptrdiff_t>(big));
  }
  veil::backend::deallocate(cpu, d, big);
  std::vector<void*> many;  // more than the limit: the rest go back to the system
  for (int i = 0; i < 8; ++i) many.push_back(veil::backend::allocate(cpu, big));
  for (void* p : many) veil::backend::deallocate(cpu, p, big);
  EXPECT_LE(veil::backend::host_cache_bytes(), std::size_t(1) << 20);
  void* small = veil::backend::allocate(cpu, 1000);  // below 64 KiB: never cached
  veil::backend::deallocate(cpu, small, 1000);
  EXPECT_LE(veil::backend::host_cache_bytes(), std::size_t(1) << 20);
  EXPECT_EQ(veil::backend::host_cache_bytes() % big, 0u);
  veil::backend::set_host_cache_limit(0);
  EXPECT_EQ(veil::backend::host_cache_bytes(), 0u);
  veil::backend::set_host_cache_limit(old_limit);
}

TEST(BackendTest, CpuRawCopyAndFill) {
  const Device cpu = Device::cpu();
  std::vector<u64> src = pattern(33, 5), dst(33, 0);
  veil::backend::copy(cpu, dst.data(), cpu, src.data(), 33 * sizeof(u64));
  EXPECT_EQ(dst, src);
  veil::backend::fill_zero(cpu, dst.data(), 10 * sizeof(u64));
  for (int i = 0; i < 33; ++i) EXPECT_EQ(dst[i], i < 10 ? 0 : src[i]) << i;
  EXPECT_EQ(veil::backend::stream(cpu), nullptr);
  EXPECT_NO_THROW(veil::backend::synchronize(cpu));
  EXPECT_NO_THROW(veil::backend::set_current(cpu));
}

// A host function standing in for a kernel: the CPU never launches it.
void not_a_kernel(int, u64) {}

TEST(BackendTest, ClusterLaunchesAreCudaOnly) {
  const Device cpu = Device::cpu();
  const veil::backend::ClusterLaunch cfg{.grid = 4, .block = 32, .cluster = 4, .smem = 0};
  EXPECT_FALSE(veil::backend::prepare_cluster_kernel(cpu, &not_a_kernel, cfg));
  try {
    veil::backend::launch_cluster(cpu, &not_a_kernel, cfg, "test launch", 1, u64(2));
    FAIL() << "a cluster launch on the CPU must throw";
  } catch (const veil::RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("test launch"), std::string::npos) << e.what();
  }
}

// ---- Buffer on CUDA -------------------------------------------------------------------------

TEST(BackendCuda, HostDeviceRoundTrip) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const Device dev(Device::Kind::cuda, 0);
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1) << 20}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const std::vector<u64> host = pattern(n, 3 * n);
    Buffer<u64> d = Buffer<u64>::from_host(dev, host);
    EXPECT_EQ(d.device(), dev);
    EXPECT_EQ(d.size(), n);
    EXPECT_EQ(d.to_host(), host);

    // device -> device on the same GPU (clone and to()), deep.
    Buffer<u64> e = d.clone();
    Buffer<u64> f = d.to(dev);
    EXPECT_NE(e.data(), d.data());
    EXPECT_EQ(e.device(), dev);
    EXPECT_EQ(e.to_host(), host);
    EXPECT_EQ(f.to_host(), host);
    e.zero();
    EXPECT_EQ(e.to_host(), std::vector<u64>(n, 0));
    EXPECT_EQ(d.to_host(), host);
    EXPECT_EQ(f.to_host(), host);

    // device -> host Buffer and back.
    Buffer<u64> h = d.to(Device::cpu());
    EXPECT_TRUE(h.device().is_cpu());
    EXPECT_EQ(h.to_host(), host);
    EXPECT_EQ(h.to(dev).to_host(), host);
  }
}

TEST(BackendCuda, PeerDeviceCopy) {
  if (veil::cuda_device_count() < 2) GTEST_SKIP() << "fewer than 2 CUDA devices";
  const Device d0(Device::Kind::cuda, 0), d1(Device::Kind::cuda, 1);
  const std::vector<u64> host = pattern(4097, 11);
  Buffer<u64> a = Buffer<u64>::from_host(d0, host);
  Buffer<u64> b = a.to(d1);
  EXPECT_EQ(b.device(), d1);
  EXPECT_EQ(b.to_host(), host);
  EXPECT_EQ(b.to(d0).to_host(), host);
}

TEST(BackendCuda, BytesInUseTracksBuffers) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const Device dev(Device::Kind::cuda, 0);
  const std::size_t before = veil::backend::bytes_in_use(dev);
  {
    Buffer<u64> a(dev, 1 << 16);
    EXPECT_EQ(veil::backend::bytes_in_use(dev), before + (std::size_t(8) << 16));
  }
  EXPECT_EQ(veil::backend::bytes_in_use(dev), before);
  EXPECT_NE(veil::backend::stream(dev), nullptr);
}

TEST(BackendCuda, UploadCopiesTheSourceAtOnceAndKeepsStreamOrder) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const Device dev(Device::Kind::cuda, 0);
  // More uploads than staging slots (16), small and over the 1 MiB slot size: each source is
  // overwritten right after its upload returns, and each destination is then used by a later
  // copy on the stream, which must see the uploaded words.
  std::vector<std::vector<u64>> want;
  std::vector<Buffer<u64>> got;
  for (std::size_t i = 0; i < 40; ++i) {
    const std::size_t n = i % 7 == 6 ? (std::size_t(1) << 17) + 3 : 1 + 911 * i;  // 1 MiB + 24 B
    std::vector<u64> src = pattern(n, 100 + i);
    want.push_back(src);
    Buffer<u64> d(dev, n);
    veil::backend::upload(dev, d.data(), src.data(), n * sizeof(u64));
    std::fill(src.begin(), src.end(), u64(0xdeadbeef));
    got.push_back(d.clone());
  }
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i].to_host(), want[i]) << i;
  // Buffer::upload is the same path.
  EXPECT_EQ(Buffer<u64>::upload(dev, want[3]).to_host(), want[3]);
}

// upload_with: the words `fill` writes into the host buffer it is handed reach the device, in
// stream order, through a staging slot (small) or a pageable copy (over 1 MiB); on the CPU the
// buffer handed to fill is the destination itself.
TEST(Backend, UploadWithWritesWhatFillProduces) {
  std::vector<Device> devs{Device::cpu()};
  if (has_gpu()) devs.push_back(Device(Device::Kind::cuda, 0));
  for (const Device& dev : devs) {
    SCOPED_TRACE(dev.str());
    std::vector<std::vector<u64>> want;
    std::vector<Buffer<u64>> got;
    for (std::size_t i = 0; i < 40; ++i) {
      const std::size_t n = i % 7 == 6 ? (std::size_t(1) << 17) + 3 : 1 + 911 * i;
      const std::vector<u64> src = pattern(n, 300 + i);
      want.push_back(src);
      Buffer<u64> d(dev, n);
      const void* handed = nullptr;
      veil::backend::upload_with(dev, d.data(), n * sizeof(u64), [&](void* host) {
        handed = host;
        u64* o = static_cast<u64*>(host);
        for (std::size_t j = 0; j < n; ++j) o[j] = src[j];
      });
      if (dev.is_cpu()) EXPECT_EQ(handed, static_cast<const void*>(d.data()));
      got.push_back(d.clone());  // a later copy on the stream sees the uploaded words
    }
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i].to_host(), want[i]) << i;
  }
}

TEST(BackendCuda, FreedBlocksServeTheNextAllocationOfTheirSize) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const Device dev(Device::Kind::cuda, 0);
  const std::size_t before = veil::backend::bytes_in_use(dev);
  const std::size_t n = 3 * 4096 + 5;
  const void* first = nullptr;
  {
    Buffer<u64> a = Buffer<u64>::from_host(dev, pattern(n, 9));
    a.set_secure();  // zeroized on the stream before the block is cached
    first = a.data();
  }
  EXPECT_EQ(veil::backend::bytes_in_use(dev), before);  // cached blocks are not in use
  Buffer<u64> b(dev, n);
  EXPECT_EQ(static_cast<const void*>(b.data()), first) << "the freed block was not reused";
  EXPECT_EQ(b.to_host(), std::vector<u64>(n, 0)) << "a secure block came back unzeroed";
  EXPECT_EQ(veil::backend::bytes_in_use(dev), before + n * sizeof(u64));
  Buffer<u64> c(dev, n + 1);  // another size: another block
  EXPECT_NE(static_cast<const void*>(c.data()), first);
}

TEST(BackendCuda, MappedFlagsStartAtZeroAndRunOutCleanly) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const Device dev(Device::Kind::cuda, 0);
  std::vector<std::uint32_t*> flags;
  while (std::uint32_t* f = veil::backend::flag_acquire(dev)) {
    EXPECT_EQ(*f, 0u);
    *f = 7;  // dirty it: the next acquire must hand it out as 0 again
    flags.push_back(f);
    ASSERT_LE(flags.size(), 1024u);
  }
  EXPECT_GE(flags.size(), 16u);
  std::sort(flags.begin(), flags.end());
  EXPECT_EQ(std::unique(flags.begin(), flags.end()), flags.end()) << "a flag handed out twice";
  veil::backend::flag_release(dev, flags.back());
  std::uint32_t* again = veil::backend::flag_acquire(dev);
  EXPECT_EQ(again, flags.back());
  EXPECT_EQ(*again, 0u);
  for (std::uint32_t* f : flags) veil::backend::flag_release(dev, f);
  EXPECT_EQ(veil::backend::flag_acquire(Device::cpu()), nullptr);
}

// Resets the pool limit even when an assertion fails.
struct PoolLimitGuard {
  Device dev;
  ~PoolLimitGuard() { veil::backend::set_pool_limit(dev, 0); }
};

TEST(BackendCuda, PoolLimitMakesAllocationThrowOutOfMemory) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const Device dev(Device::Kind::cuda, 0);
  PoolLimitGuard guard{dev};
  const std::size_t limit = veil::backend::bytes_in_use(dev) + (std::size_t(1) << 20);
  veil::backend::set_pool_limit(dev, limit);
  EXPECT_EQ(veil::backend::pool_limit(dev), limit);

  // Under the limit: fine.
  { Buffer<u64> small(dev, 1024); EXPECT_EQ(small.size(), 1024u); }

  const std::size_t count = std::size_t(1) << 20;  // 8 MiB of u64 > 1 MiB headroom
  const std::string bytes = std::to_string(count * sizeof(u64));
  try {
    Buffer<u64> big(dev, count);
    FAIL() << "allocation over the pool limit did not throw";
  } catch (const veil::OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find(bytes), std::string::npos)
        << "message does not name the request of " << bytes << " bytes: " << e.what();
  }

  veil::backend::set_pool_limit(dev, 0);
  EXPECT_EQ(veil::backend::pool_limit(dev), 0u);
  Buffer<u64> big(dev, count);
  EXPECT_EQ(big.size(), count);
  big.zero();
  EXPECT_EQ(big.to_host()[count - 1], 0u);
}

}  // namespace

// ---- Concurrent branches of a captured graph (backend/graph.h: run_branches) -----------------
namespace {

TEST(Backend, RunBranchesRunsEveryBranchInOrderWithoutACapture) {
  for (bool on : {true, false}) {
    const bool was = veil::backend::graph_branches();
    veil::backend::set_graph_branches(on);
    std::vector<int> order;
    veil::backend::run_branches(Device::cpu(), {[&] { order.push_back(0); },
                                                [&] { order.push_back(1); },
                                                [&] { order.push_back(2); }});
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
    // An exception leaves at once: no later branch runs.
    order.clear();
    EXPECT_THROW(veil::backend::run_branches(
                     Device::cpu(), {[&] { order.push_back(0); },
                                     [&] { throw veil::InvalidArgument("x: branch 1 failed"); },
                                     [&] { order.push_back(2); }}),
                 veil::InvalidArgument);
    EXPECT_EQ(order, (std::vector<int>{0}));
    veil::backend::set_graph_branches(was);
  }
}

// Branches captured into a graph: each replay runs every branch (its copies read the sources'
// words at replay time), with branches forked and joined, and without.
TEST(BackendCuda, BranchesOfACapturedGraphRunAtEveryReplay) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const Device dev(Device::Kind::cuda, 0);
  const bool was = veil::backend::graph_branches();
  constexpr std::size_t kWays = 11, n = 4096;  // more branches than side streams (8)
  for (bool on : {true, false}) {
    veil::backend::set_graph_branches(on);
    std::vector<Buffer<u64>> src, dst;
    for (std::size_t k = 0; k < kWays; ++k) {
      src.push_back(Buffer<u64>::from_host(dev, pattern(n, k)));
      dst.push_back(Buffer<u64>::from_host(dev, std::vector<u64>(n, 0)));
    }
    veil::backend::Graph graph;
    graph.begin_capture(dev);
    std::vector<std::function<void()>> work;
    for (std::size_t k = 0; k < kWays; ++k) {
      work.emplace_back([&, k] {
        Buffer<u64> tmp(dev, n);  // allocated and freed inside the branch
        veil::backend::copy(dev, tmp.data(), dev, src[k].data(), n * sizeof(u64));
        veil::backend::copy(dev, dst[k].data(), dev, tmp.data(), n * sizeof(u64));
      });
    }
    veil::backend::run_branches(dev, work);
    graph.end_capture();
    for (u64 salt : {100u, 200u}) {
      for (std::size_t k = 0; k < kWays; ++k) {
        const std::vector<u64> v = pattern(n, salt + k);
        veil::backend::copy(dev, src[k].data(), Device::cpu(), v.data(), n * sizeof(u64));
      }
      graph.launch();
      for (std::size_t k = 0; k < kWays; ++k)
        EXPECT_EQ(dst[k].to_host(), pattern(n, salt + k)) << "branch " << k << ", forked " << on;
    }
  }
  veil::backend::set_graph_branches(was);
}

// A branch that throws inside a capture: its own exception leaves (not a join failure), no later
// branch runs, the capture can be discarded, and the device works on.
TEST(BackendCuda, AThrowingBranchLeavesWithItsOwnException) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const Device dev(Device::Kind::cuda, 0);
  const bool was = veil::backend::graph_branches();
  veil::backend::set_graph_branches(true);
  Buffer<u64> a = Buffer<u64>::from_host(dev, pattern(256, 1));
  Buffer<u64> b = Buffer<u64>::from_host(dev, std::vector<u64>(256, 0));
  bool ran_after = false;
  veil::backend::Graph graph;
  graph.begin_capture(dev);
  auto copy = [&] { veil::backend::copy(dev, b.data(), dev, a.data(), 256 * sizeof(u64)); };
  EXPECT_THROW(veil::backend::run_branches(
                   dev, {copy, [&] { throw veil::InvalidArgument("x: branch 1 failed"); },
                         [&] { ran_after = true; }}),
               veil::InvalidArgument);
  EXPECT_FALSE(ran_after);
  graph.abort_capture();
  EXPECT_FALSE(graph.ready());
  veil::backend::copy(dev, b.data(), dev, a.data(), 256 * sizeof(u64));
  EXPECT_EQ(b.to_host(), pattern(256, 1));
  veil::backend::set_graph_branches(was);
}

}  // namespace
