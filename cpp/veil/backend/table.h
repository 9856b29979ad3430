// DeviceTable<T>: an immutable precomputed table kept on the host and copied lazily (once, under
// a lock) to each CUDA device that asks for it. Used for every context constant.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "veil/backend/buffer.h"

namespace veil {

/// An immutable precomputed table of T (a context constant: roots, Shoup quotients, conversion
/// matrices), kept on the host and copied to each CUDA device on first use (under a lock). Copies
/// share nothing: a copy uploads again where it is used.
/// @tparam T the entry type (plain data).
template <class T>
class DeviceTable {
 public:
  DeviceTable() = default;
  /// A table of the given host entries; nothing is uploaded yet.
  /// @param host the entries.
  explicit DeviceTable(std::vector<T> host) : host_(std::move(host)) {}
  /// Takes over the entries and the device copies of `o`.
  /// @param o the table to move from.
  DeviceTable(DeviceTable&& o) noexcept : host_(std::move(o.host_)), dev_(std::move(o.dev_)) {}
  /// Takes over the entries and the device copies of `o`.
  /// @param o the table to move from.
  /// @return *this.
  DeviceTable& operator=(DeviceTable&& o) noexcept {
    host_ = std::move(o.host_);
    dev_ = std::move(o.dev_);
    return *this;
  }
  /// Copies the host entries only (device copies are made again on use).
  /// @param o the table to copy.
  DeviceTable(const DeviceTable& o) : host_(o.host_) {}
  /// Copies the host entries and drops this table's device copies.
  /// @param o the table to copy.
  /// @return *this.
  DeviceTable& operator=(const DeviceTable& o) {
    host_ = o.host_;
    dev_.clear();
    return *this;
  }

  /// Pointer to the table on `dev` (host pointer for the CPU), uploading it to a CUDA device the
  /// first time that device asks (Buffer::upload). Thread-safe.
  /// @param dev the device the caller's kernel runs on.
  /// @return the entries on `dev`, valid as long as the table.
  /// @throws veil::OutOfMemory or veil::RuntimeError if the upload fails.
  const T* data(const Device& dev) const {
    if (dev.is_cpu() || host_.empty()) return host_.data();
    std::lock_guard<std::mutex> lock(*mu_);
    auto it = dev_.find(dev.index);
    if (it == dev_.end()) it = dev_.emplace(dev.index, Buffer<T>::upload(dev, host_)).first;
    return it->second.data();
  }
  /// The host entries.
  /// @return the entries, in order.
  const std::vector<T>& host() const { return host_; }
  /// The number of entries.
  /// @return the entry count.
  std::size_t size() const { return host_.size(); }
  /// The host entry at `i` (unchecked).
  /// @param i the index, below size().
  /// @return the entry.
  const T& operator[](std::size_t i) const { return host_[i]; }

 private:
  std::vector<T> host_;
  std::shared_ptr<std::mutex> mu_ = std::make_shared<std::mutex>();
  mutable std::map<int, Buffer<T>> dev_;
};

}  // namespace veil
