// DeviceTable<T>: an immutable precomputed table kept on the host and copied lazily (once, under
// a lock) to each CUDA device that asks for it. Used for every context constant.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "veil/backend/buffer.h"

namespace veil {

template <class T>
class DeviceTable {
 public:
  DeviceTable() = default;
  explicit DeviceTable(std::vector<T> host) : host_(std::move(host)) {}
  DeviceTable(DeviceTable&& o) noexcept : host_(std::move(o.host_)), dev_(std::move(o.dev_)) {}
  DeviceTable& operator=(DeviceTable&& o) noexcept {
    host_ = std::move(o.host_);
    dev_ = std::move(o.dev_);
    return *this;
  }
  DeviceTable(const DeviceTable& o) : host_(o.host_) {}
  DeviceTable& operator=(const DeviceTable& o) {
    host_ = o.host_;
    dev_.clear();
    return *this;
  }

  /// Pointer to the table on `dev` (host pointer for the CPU).
  const T* data(const Device& dev) const {
    if (dev.is_cpu() || host_.empty()) return host_.data();
    std::lock_guard<std::mutex> lock(*mu_);
    auto it = dev_.find(dev.index);
    if (it == dev_.end()) it = dev_.emplace(dev.index, Buffer<T>::upload(dev, host_)).first;
    return it->second.data();
  }
  const std::vector<T>& host() const { return host_; }
  std::size_t size() const { return host_.size(); }
  const T& operator[](std::size_t i) const { return host_[i]; }

 private:
  std::vector<T> host_;
  std::shared_ptr<std::mutex> mu_ = std::make_shared<std::mutex>();
  mutable std::map<int, Buffer<T>> dev_;
};

}  // namespace veil
