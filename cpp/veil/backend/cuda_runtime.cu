// The CUDA runtime side of the backend: per-device stream and stream-ordered memory pool.
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "veil/backend/cuda_impl.h"
#include "veil/core/error.h"

namespace veil::backend::cuda {

namespace {

constexpr int kMaxDevices = 64;

void check(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear sticky-free errors
  if (err == cudaErrorMemoryAllocation) {
    throw OutOfMemory(what + ": " + cudaGetErrorString(err));
  }
  throw RuntimeError(what + ": " + cudaGetErrorString(err));
}

// Public host data uploaded without a synchronization (upload()): kStageSlots pinned slots of
// kStageBytes, used round robin; a slot is written again only after the event recorded behind
// the copy that read it.
constexpr std::size_t kStageSlots = 16;
constexpr std::size_t kStageBytes = std::size_t(1) << 20;

struct Staging {
  std::mutex mu;
  std::array<void*, kStageSlots> slot{};
  std::array<cudaEvent_t, kStageSlots> done{};
  std::size_t next = 0;
};

// Freed blocks kept by exact size for the next allocation of that size. Outside a graph capture
// every use of a block is queued on the device's one stream (the side streams of run_branches
// exist only inside captures), so a block freed after its last queued use may serve the next
// allocation at once, exactly as cudaFreeAsync + cudaMallocFromPoolAsync on that stream would,
// without the two driver calls (an HE operation allocates the same few sizes on every call).
// Bypassed while the stream is captured into a graph (its allocations become graph nodes);
// bounded, and flushed to the pool when an allocation fails or nears the pool limit.
constexpr std::size_t kCacheMaxBlock = std::size_t(64) << 20;
constexpr std::size_t kCacheMaxBytes = std::size_t(256) << 20;

struct BlockCache {
  std::mutex mu;
  std::unordered_map<std::size_t, std::vector<void*>> free;
  std::atomic<std::size_t> bytes{0};
  // Blocks allocated while the stream was captured (graph allocations): never cached, since a
  // relaunch of their graph frees and maps them again.
  std::unordered_set<void*> graph;
};

// Host-mapped flags for any_of: a kernel writes one directly, so a test costs a launch and a
// synchronization (no allocation, memset or copy). kFlags per device, handed out under a lock.
constexpr std::size_t kFlags = 64;

struct Flags {
  std::mutex mu;
  std::uint32_t* host = nullptr;  // pinned, mapped (the same address on the device: UVA)
  std::vector<std::size_t> idle;
};

struct DeviceState {
  std::once_flag once;
  cudaStream_t stream = nullptr;
  cudaMemPool_t pool = nullptr;
  std::atomic<std::size_t> in_use{0};
  std::atomic<std::size_t> limit{0};
  // Pinned host copies of the host data uploaded while the stream is being captured: the graph
  // reads them again at every replay, so they live as long as the graph (graph_end/destroy).
  std::vector<void*> capture_pins;
  Staging staging;
  BlockCache cache;
  std::atomic<bool> capturing{false};  // between graph_begin and graph_end/graph_abort
  Flags flags;
  // Concurrent branches of a capture (run_branches): side streams joined into the capture at a
  // fork and back into `stream` after their branch, and the events that express both.
  std::mutex branch_mu;
  std::vector<cudaStream_t> side;
  std::vector<cudaEvent_t> branch_events;
  std::size_t next_branch_event = 0;  // reset at each graph_begin
};

// The stream this thread's work on a device goes to: a side stream inside a branch of
// run_branches, else the device's stream.
thread_local int t_branch_index = -1;
thread_local cudaStream_t t_branch_stream = nullptr;
thread_local int t_branch_depth = 0;  // > 0 while this thread runs a branch of run_branches

cudaStream_t active_stream(int index, const DeviceState& st) {
  return t_branch_stream != nullptr && t_branch_index == index ? t_branch_stream : st.stream;
}

// Returns the cached blocks to the pool (stream-ordered). Not while the stream is captured: a
// free captured into a graph must name a graph allocation, and the pool would not gain from it.
void flush_cache(int index, DeviceState& st) noexcept {
  if (st.capturing.load()) return;
  std::lock_guard<std::mutex> lock(st.cache.mu);
  if (st.cache.bytes == 0) return;
  cudaSetDevice(index);
  for (auto& [size, blocks] : st.cache.free) {
    for (void* p : blocks) cudaFreeAsync(p, st.stream);
    blocks.clear();
  }
  st.cache.bytes = 0;
  cudaGetLastError();  // a failed free must not read as the next launch's error
}

std::mutex& graph_mutex() {
  static std::mutex m;
  return m;
}

// exec -> the pinned host copies its memcpy nodes read.
std::map<void*, std::vector<void*>>& graph_pins() {
  static std::map<void*, std::vector<void*>> m;
  return m;
}

bool capturing(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(s, &status) == cudaSuccess &&
         status == cudaStreamCaptureStatusActive;
}

std::array<DeviceState, kMaxDevices>& states() {
  // Never destroyed: a Buffer freed during static destruction still finds its device's state.
  static auto* s = new std::array<DeviceState, kMaxDevices>();
  return *s;
}

void release_at_exit() noexcept;

DeviceState& state(int index) {
  if (index < 0 || index >= kMaxDevices) {
    throw InvalidArgument("device: CUDA index " + std::to_string(index) + " out of range");
  }
  check_cuda_usable_after_fork();
  DeviceState& st = states()[index];
  std::call_once(st.once, [&] {
    note_cuda_initialized();
    check(cudaSetDevice(index), "cudaSetDevice(" + std::to_string(index) + ")");
    check(cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = index;
    check(cudaMemPoolCreate(&st.pool, &props), "cudaMemPoolCreate");
    // Keep freed blocks in the pool: repeated HE operations reuse them without driver calls.
    std::uint64_t threshold = UINT64_MAX;
    check(cudaMemPoolSetAttribute(st.pool, cudaMemPoolAttrReleaseThreshold, &threshold),
          "cudaMemPoolSetAttribute");
    if (const char* env = std::getenv("VEIL_CUDA_POOL_LIMIT")) {
      st.limit = std::strtoull(env, nullptr, 10);
    }
    // Registered after the runtime has initialized (it registers its teardown then), so that
    // this handler runs before that teardown.
    static std::once_flag at_exit;
    std::call_once(at_exit, [] { std::atexit(release_at_exit); });
  });
  return st;
}

// At exit: the cached blocks go back to the pool and the pinned staging slots and flags to the
// driver, so that nothing Veil kept for reuse reads as a leak (compute-sanitizer's leak check).
// Not in a forked child, whose CUDA state is unusable.
void release_at_exit() noexcept {
  if (forked_child()) return;
  for (int i = 0; i < kMaxDevices; ++i) {
    DeviceState& st = states()[i];
    if (st.stream == nullptr) continue;
    flush_cache(i, st);
    cudaSetDevice(i);
    cudaStreamSynchronize(st.stream);
    {
      std::lock_guard<std::mutex> lock(st.staging.mu);
      for (std::size_t k = 0; k < kStageSlots; ++k) {
        if (st.staging.slot[k]) cudaFreeHost(st.staging.slot[k]);
        if (st.staging.done[k]) cudaEventDestroy(st.staging.done[k]);
        st.staging.slot[k] = nullptr;
        st.staging.done[k] = nullptr;
      }
    }
    std::lock_guard<std::mutex> lock(st.flags.mu);
    if (st.flags.host) cudaFreeHost(st.flags.host);
    st.flags.host = nullptr;
    st.flags.idle.clear();
  }
  cudaGetLastError();
}

}  // namespace

bool built() { return true; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

CudaDeviceInfo device_info(int index) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
  CudaDeviceInfo info;
  info.name = prop.name;
  info.total_memory = prop.totalGlobalMem;
  info.multiprocessors = prop.multiProcessorCount;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  cudaRuntimeGetVersion(&info.runtime_version);
  cudaDriverGetVersion(&info.driver_version);
  return info;
}

void* allocate(int index, std::size_t bytes) {
  DeviceState& st = state(index);
  const bool cacheable = bytes <= kCacheMaxBlock && !st.capturing.load();
  if (cacheable) {
    std::lock_guard<std::mutex> lock(st.cache.mu);
    auto it = st.cache.free.find(bytes);
    if (it != st.cache.free.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      st.cache.bytes -= bytes;
      st.in_use += bytes;
      return p;
    }
  }
  std::size_t limit = st.limit.load();
  std::size_t used = st.in_use.load();
  if (limit && used + st.cache.bytes + bytes > limit) flush_cache(index, st);
  if (limit && used + bytes > limit) {
    throw OutOfMemory("cuda:" + std::to_string(index) + ": allocation of " +
                      std::to_string(bytes) + " bytes exceeds the pool limit of " +
                      std::to_string(limit) + " bytes (" + std::to_string(used) + " in use)");
  }
  check(cudaSetDevice(index), "cudaSetDevice");
  void* p = nullptr;
  cudaError_t err = cudaMallocFromPoolAsync(&p, bytes, st.pool, active_stream(index, st));
  if (err != cudaSuccess && st.cache.bytes > 0) {  // the cached blocks first, then once more
    cudaGetLastError();
    flush_cache(index, st);
    err = cudaMallocFromPoolAsync(&p, bytes, st.pool, active_stream(index, st));
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw OutOfMemory("cuda:" + std::to_string(index) + ": allocation of " +
                      std::to_string(bytes) + " bytes failed (" + std::to_string(used) +
                      " bytes in use through Veil): " + cudaGetErrorString(err));
  }
  if (st.capturing.load()) {
    std::lock_guard<std::mutex> lock(st.cache.mu);
    st.cache.graph.insert(p);
  }
  st.in_use += bytes;
  return p;
}

void deallocate(int index, void* ptr, std::size_t bytes) noexcept {
  DeviceState& st = states()[index];
  st.in_use -= bytes;
  try {
    std::lock_guard<std::mutex> lock(st.cache.mu);
    const bool graph_block = !st.cache.graph.empty() && st.cache.graph.erase(ptr) > 0;
    if (!graph_block && bytes <= kCacheMaxBlock && !st.capturing.load() &&
        st.cache.bytes + bytes <= kCacheMaxBytes) {
      st.cache.free[bytes].push_back(ptr);
      st.cache.bytes += bytes;
      return;
    }
  } catch (...) {  // no memory for the bookkeeping: free the block instead
  }
  cudaSetDevice(index);
  cudaFreeAsync(ptr, active_stream(index, st));
}

std::uint32_t* flag_acquire(int index) {
  DeviceState& st = state(index);
  Flags& f = st.flags;
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.host == nullptr) {
    check(cudaSetDevice(index), "cudaSetDevice");
    void* p = nullptr;
    if (cudaHostAlloc(&p, kFlags * sizeof(std::uint32_t), cudaHostAllocMapped) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;  // no pinned memory: any_of takes its device flag and copy
    }
    f.host = static_cast<std::uint32_t*>(p);
    for (std::size_t i = kFlags; i-- > 0;) f.idle.push_back(i);
  }
  if (f.idle.empty()) return nullptr;  // all in use (kFlags concurrent tests): the caller copies
  const std::size_t i = f.idle.back();
  f.idle.pop_back();
  volatile std::uint32_t* flag = f.host + i;
  *flag = 0;
  return f.host + i;
}

void flag_release(int index, std::uint32_t* flag) noexcept {
  Flags& f = states()[index].flags;
  std::lock_guard<std::mutex> lock(f.mu);
  f.idle.push_back(static_cast<std::size_t>(flag - f.host));
}

void copy(int dst_index, void* dst, int src_index, const void* src, std::size_t bytes, int kind) {
  if (kind == 0) {
    DeviceState& st = state(dst_index);
    check(cudaSetDevice(dst_index), "cudaSetDevice");
    const cudaStream_t s = active_stream(dst_index, st);
    if (capturing(s)) {
      // Inside a graph capture (backend/graph.h): no synchronization; the upload reads a pinned
      // copy that the graph keeps for its replays.
      void* pin = nullptr;
      check(cudaMallocHost(&pin, bytes), "cudaMallocHost");
      std::memcpy(pin, src, bytes);
      st.capture_pins.push_back(pin);
      check(cudaMemcpyAsync(dst, pin, bytes, cudaMemcpyHostToDevice, s), "copy to device");
      return;
    }
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), "copy to device");
    // The host source may be freed right after return: wait for the copy.
    check(cudaStreamSynchronize(s), "copy to device");
  } else if (kind == 1) {
    DeviceState& st = state(src_index);
    check(cudaSetDevice(src_index), "cudaSetDevice");
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, st.stream), "copy to host");
    check(cudaStreamSynchronize(st.stream), "copy to host");
  } else if (dst_index == src_index) {
    DeviceState& st = state(dst_index);
    check(cudaSetDevice(dst_index), "cudaSetDevice");
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, active_stream(dst_index, st)),
          "device copy");
  } else {
    // Different GPUs: order after both streams' work.
    synchronize(src_index);
    DeviceState& st = state(dst_index);
    check(cudaMemcpyPeerAsync(dst, dst_index, src, src_index, bytes, st.stream), "peer copy");
    check(cudaStreamSynchronize(st.stream), "peer copy");
  }
}

void upload_with(int index, void* dst, std::size_t bytes, const std::function<void(void*)>& fill) {
  DeviceState& st = state(index);
  auto unstaged = [&] {  // copy()'s path, from a pageable host copy
    std::vector<unsigned char> host(bytes);
    fill(host.data());
    copy(index, dst, -1, host.data(), bytes, 0);
  };
  if (bytes > kStageBytes || st.capturing.load()) return unstaged();
  Staging& s = st.staging;
  std::unique_lock<std::mutex> lock(s.mu);
  const std::size_t i = s.next;
  check(cudaSetDevice(index), "cudaSetDevice");
  if (s.slot[i] == nullptr) {
    void* pin = nullptr;
    if (cudaMallocHost(&pin, kStageBytes) != cudaSuccess) {  // no pinned memory
      cudaGetLastError();
      lock.unlock();
      return unstaged();
    }
    cudaEvent_t ev = nullptr;
    const cudaError_t err = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (err != cudaSuccess) cudaFreeHost(pin);
    check(err, "cudaEventCreate");
    s.slot[i] = pin;
    s.done[i] = ev;
  } else {
    check(cudaEventSynchronize(s.done[i]), "upload");  // the last copy that read this slot
  }
  fill(s.slot[i]);
  const cudaStream_t stream = active_stream(index, st);
  check(cudaMemcpyAsync(dst, s.slot[i], bytes, cudaMemcpyHostToDevice, stream), "upload");
  check(cudaEventRecord(s.done[i], stream), "upload");
  s.next = (i + 1) % kStageSlots;
}

void upload(int index, void* dst, const void* src, std::size_t bytes) {
  DeviceState& st = state(index);
  if (bytes > kStageBytes || st.capturing.load()) {
    copy(index, dst, -1, src, bytes, 0);
    return;
  }
  upload_with(index, dst, bytes, [&](void* host) { std::memcpy(host, src, bytes); });
}

void fill_zero(int index, void* ptr, std::size_t bytes) {
  DeviceState& st = state(index);
  check(cudaSetDevice(index), "cudaSetDevice");
  check(cudaMemsetAsync(ptr, 0, bytes, active_stream(index, st)), "cudaMemsetAsync");
}

void copy_rows(int index, void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
               std::size_t width, std::size_t rows) {
  DeviceState& st = state(index);
  check(cudaSetDevice(index), "cudaSetDevice");
  check(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDeviceToDevice,
                          active_stream(index, st)),
        "cudaMemcpy2DAsync");
}

void synchronize(int index) {
  DeviceState& st = state(index);
  check(cudaStreamSynchronize(st.stream), "cudaStreamSynchronize");
}

void synchronize_device(int index) {
  state(index);
  check(cudaSetDevice(index), "cudaSetDevice");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

StreamHandle stream(int index) {
  const DeviceState& st = state(index);
  return active_stream(index, st);
}

void set_current(int index) {
  state(index);
  check(cudaSetDevice(index), "cudaSetDevice");
}

void set_pool_limit(int index, std::size_t bytes) {
  DeviceState& st = state(index);
  st.limit = bytes;
  flush_cache(index, st);  // a lower limit holds for the cached blocks too
}
std::size_t pool_limit(int index) { return state(index).limit.load(); }
std::size_t bytes_in_use(int index) { return state(index).in_use.load(); }

void check_last_launch(const char* what) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    throw RuntimeError(std::string("CUDA launch failed in ") + what + ": " +
                       cudaGetErrorString(err));
  }
}

void* event_create(int index) {
  set_current(index);
  cudaEvent_t ev = nullptr;
  check(cudaEventCreate(&ev), "cudaEventCreate");
  return ev;
}

void event_destroy(void* ev) noexcept {
  if (ev) cudaEventDestroy(static_cast<cudaEvent_t>(ev));
}

void event_record(int index, void* ev) {
  const DeviceState& st = state(index);
  check(cudaEventRecord(static_cast<cudaEvent_t>(ev), active_stream(index, st)), "cudaEventRecord");
}

double event_elapsed_ms(void* start, void* stop) {
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(stop)), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(stop)),
        "cudaEventElapsedTime");
  return ms;
}

// ---- concurrent branches of a capture (graph.h: run_branches) -------------------------------
namespace {

constexpr std::size_t kSideStreams = 8;

// An event for one fork or join of the capture in progress (a pool per device, reused from the
// start at each graph_begin: an event only carries the dependency it had when it was waited on).
cudaEvent_t branch_event(DeviceState& st) {
  std::lock_guard<std::mutex> lock(st.branch_mu);
  if (st.next_branch_event == st.branch_events.size()) {
    cudaEvent_t ev = nullptr;
    check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
    st.branch_events.push_back(ev);
  }
  return st.branch_events[st.next_branch_event++];
}

cudaStream_t side_stream(DeviceState& st, std::size_t k) {
  std::lock_guard<std::mutex> lock(st.branch_mu);
  while (st.side.size() <= k) {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    st.side.push_back(s);
  }
  return st.side[k];
}

}  // namespace

void run_branches(int index, const std::vector<std::function<void()>>& branches) {
  DeviceState& st = state(index);
  const bool fork = branches.size() > 1 && st.capturing.load() && t_branch_depth == 0 &&
                    capturing(st.stream);
  // Any run_branches inside a branch (branch 0 included) runs its branches one after another on
  // the stream in use.
  struct Depth {
    Depth() { ++t_branch_depth; }
    ~Depth() { --t_branch_depth; }
  };
  if (!fork) {
    const Depth depth;
    for (const auto& f : branches) f();
    return;
  }
  check(cudaSetDevice(index), "cudaSetDevice");
  const cudaEvent_t start = branch_event(st);
  check(cudaEventRecord(start, st.stream), "cudaEventRecord (fork)");
  {
    const Depth depth;
    branches[0]();  // on the device's stream
  }
  std::exception_ptr error;
  for (std::size_t k = 1; k < branches.size() && !error; ++k) {
    check(cudaSetDevice(index), "cudaSetDevice");  // a branch may have made another current
    const cudaStream_t side = side_stream(st, (k - 1) % kSideStreams);
    check(cudaStreamWaitEvent(side, start, 0), "cudaStreamWaitEvent (fork)");
    t_branch_index = index;
    t_branch_stream = side;
    try {
      const Depth depth;
      branches[k]();
    } catch (...) {
      error = std::current_exception();
    }
    t_branch_index = -1;
    t_branch_stream = nullptr;
    cudaSetDevice(index);
    // Joined back even after an error, so that the capture can end (and be discarded). After an
    // error the capture may already be invalidated, so these calls may fail too: the branch's
    // own exception is the one that leaves.
    const cudaEvent_t done = branch_event(st);
    const cudaError_t rec = cudaEventRecord(done, side);
    const cudaError_t wait = rec == cudaSuccess ? cudaStreamWaitEvent(st.stream, done, 0) : rec;
    if (error) {
      cudaGetLastError();
    } else {
      check(rec, "cudaEventRecord (join)");
      check(wait, "cudaStreamWaitEvent (join)");
    }
  }
  if (error) std::rethrow_exception(error);
}

// ---- graphs -----------------------------------------------------------------------------------
void graph_begin(int index) {
  DeviceState& st = state(index);
  check(cudaSetDevice(index), "cudaSetDevice");
  // Relaxed: other threads' unrelated CUDA calls (and this one's allocations) stay legal.
  st.capture_pins.clear();
  {
    std::lock_guard<std::mutex> lock(st.branch_mu);
    st.next_branch_event = 0;
  }
  st.capturing = true;
  const cudaError_t err = cudaStreamBeginCapture(st.stream, cudaStreamCaptureModeRelaxed);
  if (err != cudaSuccess) st.capturing = false;
  check(err, "cudaStreamBeginCapture");
}

namespace {
void free_pins(std::vector<void*>& pins) noexcept {
  for (void* p : pins) cudaFreeHost(p);
  pins.clear();
}
}  // namespace

void* graph_end(int index) {
  DeviceState& st = state(index);
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(st.stream, &graph);
  st.capturing = false;
  if (end != cudaSuccess) free_pins(st.capture_pins);
  check(end, "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t err =
      cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
  cudaGraphDestroy(graph);
  if (err != cudaSuccess) free_pins(st.capture_pins);
  check(err, "cudaGraphInstantiate");
  std::lock_guard<std::mutex> lock(graph_mutex());
  graph_pins()[exec] = std::move(st.capture_pins);
  st.capture_pins.clear();
  return exec;
}

void graph_abort(int index) noexcept {
  DeviceState& st = states()[index];
  cudaGraph_t graph = nullptr;
  if (cudaStreamEndCapture(st.stream, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
  st.capturing = false;
  cudaGetLastError();
  free_pins(st.capture_pins);
}

void graph_launch(int index, void* exec) {
  DeviceState& st = state(index);
  check(cudaSetDevice(index), "cudaSetDevice");
  check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec), st.stream), "cudaGraphLaunch");
}

void graph_destroy(void* exec) noexcept {
  cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec));
  std::lock_guard<std::mutex> lock(graph_mutex());
  auto it = graph_pins().find(exec);
  if (it != graph_pins().end()) {
    free_pins(it->second);
    graph_pins().erase(it);
  }
}

// ---- cluster launches (backend/cluster.h) -----------------------------------------------------
namespace {
// `c` as the runtime's launch configuration; `attr` receives the cluster-dimension attribute.
cudaLaunchConfig_t cluster_config(const ClusterLaunch& c, cudaLaunchAttribute (&attr)[1]) {
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = c.cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(c.grid, 1, 1);
  cfg.blockDim = dim3(c.block, 1, 1);
  cfg.dynamicSmemBytes = c.smem;
  cfg.stream = c.stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}
}  // namespace

bool prepare_cluster_kernel(int index, const void* kernel, const ClusterLaunch& c) {
  set_current(index);
  cudaLaunchAttribute attr[1];
  cudaLaunchConfig_t cfg = cluster_config(c, attr);
  cfg.gridDim = dim3(c.cluster, 1, 1);  // one cluster
  bool ok = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(c.smem)) == cudaSuccess;
  if (ok && c.cluster > 8) {
    ok = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) ==
         cudaSuccess;
  }
  int clusters = 0;
  ok = ok && cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) == cudaSuccess && clusters > 0;
  cudaGetLastError();  // a refusal only tells the caller to use other kernels
  return ok;
}

void launch_cluster(int, const void* kernel, const ClusterLaunch& c, void** args,
                    const char* what) {
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = cluster_config(c, attr);
  const cudaError_t err = cudaLaunchKernelExC(&cfg, kernel, args);
  if (err == cudaSuccess) return;
  cudaGetLastError();
  throw RuntimeError(std::string(what) + ": " + cudaGetErrorString(err));
}

}  // namespace veil::backend::cuda
