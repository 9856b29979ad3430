// Buffer<T>: an owning, movable, non-copyable array of T on one Device (RAII).
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "veil/backend/memory.h"
#include "veil/core/error.h"

namespace veil {

/// An owning, movable, non-copyable array of T on one Device (RAII): memory from backend::allocate,
/// returned to it (zeroized first when marked secure) by the destructor.
/// @tparam T the element type (trivially copyable: copies are byte copies).
template <class T>
class Buffer {
 public:
  Buffer() = default;
  /// `count` uninitialized elements on `dev`.
  /// @param dev the device.
  /// @param count the number of elements (0: no allocation).
  /// @throws veil::OutOfMemory if the allocation fails.
  Buffer(const Device& dev, std::size_t count) : dev_(dev), size_(count) {
    if (count) data_ = static_cast<T*>(backend::allocate(dev, count * sizeof(T)));
  }
  /// Copies a host vector onto `dev`.
  /// Waits for the copy to complete (backend::copy).
  /// @param dev the destination device.
  /// @param host the elements.
  /// @return a buffer of host.size() elements on `dev`.
  /// @throws veil::OutOfMemory or veil::RuntimeError if the allocation or copy fails.
  static Buffer from_host(const Device& dev, const std::vector<T>& host) {
    Buffer b(dev, host.size());
    if (!host.empty())
      backend::copy(dev, b.data_, Device::cpu(), host.data(), host.size() * sizeof(T));
    return b;
  }
  /// Copies public host data onto `dev` without waiting for the copy (backend::upload): for
  /// tables and encoder inputs, never for secret material.
  /// @param dev the destination device.
  /// @param host the elements (reusable on return).
  /// @return a buffer of host.size() elements on `dev`.
  /// @throws veil::OutOfMemory or veil::RuntimeError if the allocation or copy fails.
  static Buffer upload(const Device& dev, const std::vector<T>& host) {
    Buffer b(dev, host.size());
    if (!host.empty()) backend::upload(dev, b.data_, host.data(), host.size() * sizeof(T));
    return b;
  }
  ~Buffer() { release(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  /// Takes over `o`'s memory; `o` is left empty.
  /// @param o the buffer to move from.
  Buffer(Buffer&& o) noexcept { swap(o); }
  /// Releases this buffer's memory (zeroized if secure) and takes over `o`'s.
  /// @param o the buffer to move from.
  /// @return *this.
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }

  /// The elements (device memory for a CUDA buffer).
  /// @return the first element, nullptr when empty.
  T* data() { return data_; }
  /// The elements, read-only.
  /// @return the first element, nullptr when empty.
  const T* data() const { return data_; }
  /// The number of elements.
  /// @return the element count.
  std::size_t size() const { return size_; }
  /// Whether the buffer holds no elements.
  /// @return true when size() is 0.
  bool empty() const { return size_ == 0; }
  /// The device the memory is on.
  /// @return the device.
  const Device& device() const { return dev_; }

  /// Deep copy on the same device.
  /// @return the copy (secure if this one is).
  /// @throws veil::OutOfMemory or veil::RuntimeError if the allocation or copy fails.
  Buffer clone() const { return to(dev_); }
  /// Deep copy onto another device (a secure buffer's copy is secure too).
  /// @param dev the destination device.
  /// @return the copy.
  /// @throws veil::OutOfMemory or veil::RuntimeError if the allocation or copy fails.
  Buffer to(const Device& dev) const {
    Buffer b(dev, size_);
    b.secure_ = secure_;
    if (size_) backend::copy(dev, b.data_, dev_, data_, size_ * sizeof(T));
    return b;
  }
  /// Marks the buffer as holding secret material: its memory is overwritten with zeros before
  /// it goes back to the allocator (host heap or the device pool), so a later allocation never
  /// sees the secret.
  /// @param on true to mark, false to unmark.
  void set_secure(bool on = true) { secure_ = on; }
  /// Whether the buffer is marked as holding secret material.
  /// @return true when zeroized before it is freed.
  bool secure() const { return secure_; }
  /// A host copy of the elements (waits for the copy).
  /// @return size() elements.
  /// @throws veil::RuntimeError if the copy fails.
  std::vector<T> to_host() const {
    std::vector<T> v(size_);
    if (size_) backend::copy(Device::cpu(), v.data(), dev_, data_, size_ * sizeof(T));
    return v;
  }
  /// Sets every byte to zero (stream-ordered on a device).
  /// @throws veil::RuntimeError on a CUDA error.
  void zero() {
    if (size_) backend::fill_zero(dev_, data_, size_ * sizeof(T));
  }

  /// Takes over the memory of a buffer of another element type (no copy): the bytes stay where
  /// they are and are read as T. Throws InvalidArgument if their count is not a multiple of
  /// sizeof(T).
  /// @tparam U the other element type.
  /// @param o the buffer whose memory is taken; left empty.
  /// @return a buffer of o.size() * sizeof(U) / sizeof(T) elements, secure if `o` was.
  /// @throws veil::InvalidArgument if the byte count is not a multiple of sizeof(T).
  template <class U>
  static Buffer adopt(Buffer<U>&& o) {
    const std::size_t bytes = o.size_ * sizeof(U);
    if (bytes % sizeof(T) != 0) {
      throw InvalidArgument("Buffer::adopt: " + std::to_string(bytes) +
                            " bytes are not a whole number of elements");
    }
    Buffer b;
    b.dev_ = o.dev_;
    b.data_ = reinterpret_cast<T*>(o.data_);
    b.size_ = bytes / sizeof(T);
    b.secure_ = o.secure_;
    o.data_ = nullptr;
    o.size_ = 0;
    o.secure_ = false;
    return b;
  }

 private:
  template <class U>
  friend class Buffer;
  void release() noexcept {
    if (data_) {
      if (secure_) backend::zeroize(dev_, data_, size_ * sizeof(T));
      backend::deallocate(dev_, data_, size_ * sizeof(T));
    }
    data_ = nullptr;
    size_ = 0;
    secure_ = false;
  }
  void swap(Buffer& o) noexcept {
    std::swap(dev_, o.dev_);
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(secure_, o.secure_);
  }
  Device dev_{};
  T* data_ = nullptr;
  std::size_t size_ = 0;
  bool secure_ = false;
};

}  // namespace veil
