#include "veil/backend/cluster.h"

#include <string>

#include "veil/backend/cuda_impl.h"
#include "veil/core/error.h"

namespace veil::backend {

bool prepare_cluster_kernel(const Device& dev, const void* kernel, const ClusterLaunch& cfg) {
  return dev.is_cuda() && cuda::prepare_cluster_kernel(dev.index, kernel, cfg);
}

void launch_cluster_args(const Device& dev, const void* kernel, const ClusterLaunch& cfg,
                         void** args, const char* what) {
  if (!dev.is_cuda()) {
    throw RuntimeError(std::string(what) + ": a cluster launch needs a CUDA device, got " +
                       dev.str());
  }
  cuda::launch_cluster(dev.index, kernel, cfg, args, what);
}

}  // namespace veil::backend
