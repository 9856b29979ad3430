// veil._core's process and device functions: the translation of Veil's C++ exceptions to Python
// ones, CUDA devices, CPU threads, the memory pool, synchronization, Timer, and Ctrl-C in long C++
// loops.
#include <nanobind/nanobind.h>

#include <exception>
#include <string>

#include "bind.h"
#include "bind_common.h"
#include "veil/backend/device.h"
#include "veil/backend/memory.h"
#include "veil/backend/timer.h"
#include "veil/core/error.h"
#include "veil/rlwe/checks.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

void bind_errors(nb::module_&) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const TypeMismatch& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const veil::RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

void bind_backend(nb::module_& m) {
  m.def("cuda_built", &cuda_built, "True when this build contains the CUDA backend.");
  m.def("cuda_device_count", &cuda_device_count, "Number of usable CUDA devices.");
  m.def(
      "cuda_device_info",
      [](nb::handle index) {
        CudaDeviceInfo d = cuda_device_info(int_arg(index, "index", 0, 1023));
        nb::dict r;
        r["name"] = d.name;
        r["total_memory"] = d.total_memory;
        r["multiprocessors"] = d.multiprocessors;
        r["compute_capability"] = std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor);
        r["runtime_version"] = d.runtime_version;
        r["driver_version"] = d.driver_version;
        return r;
      },
      "index"_a = 0, "Name, memory (bytes), SM count and versions of CUDA device `index`.");
  m.def("num_threads", &num_threads, "OpenMP threads used by the CPU backend.");
  m.def("set_num_threads", [](nb::handle n) { set_num_threads(int_arg(n, "n")); }, "n"_a,
        "Sets the CPU backend's threads: 0 restores the default, else 1..max_num_threads(). "
        "ValueError naming `n` otherwise.");
  m.def("max_num_threads", &max_num_threads, "Largest accepted set_num_threads (4x the processors).");
  m.def("set_transparent_check", &set_transparent_check, "on"_a,
        "Turns SEAL's transparent-result check (on by default) on or off for this process.");
  m.def("transparent_check", &transparent_check);
  m.def("zeroized_bytes", [](const std::string& d) { return backend::zeroized_bytes(dev_of(d)); },
        "device"_a, "Bytes of secret memory zeroized on free so far (tests).");
  m.def("forked_child", &backend::forked_child,
        "True in a process forked after Veil was loaded (the CPU backend then runs serially).");
  // Without the GIL: a thread waiting for its device must not stop the process's other threads
  // (a Ray worker pickles one result while the next bootstrap runs).
  m.def("synchronize", [](const std::string& d) { backend::synchronize(dev_of(d)); }, "device"_a,
        nb::call_guard<Release>());
  m.def("set_pool_limit", [](const std::string& d, nb::handle b) { backend::set_pool_limit(dev_of(d), size_arg(b, "bytes")); },
        "device"_a, "bytes"_a, "Caps Veil's memory pool on a CUDA device (0: no cap).");
  m.def("bytes_in_use", [](const std::string& d) { return backend::bytes_in_use(dev_of(d)); }, "device"_a);
  m.def("parse_device", [](const std::string& d) { return dev_of(d).str(); }, "device"_a,
        "Validates a device string ('cpu', 'cuda', 'cuda:k') and returns its canonical form.");

  nb::class_<Timer>(m, "Timer", "CUDA-event (GPU) or steady-clock (CPU) timer, in milliseconds.")
      .def("__init__", [](Timer* t, const std::string& d) { new (t) Timer(dev_of(d)); }, "device"_a)
      .def("__repr__", [](const Timer&) { return std::string("veil.Timer()"); })
      .def("start", &Timer::start)
      .def("stop", &Timer::stop, "Milliseconds since start(); synchronizes.");
}

void bind_interrupts(nb::module_&) {
  // Ctrl-C during long C++ loops (key generation, products of many ciphertexts): they call
  // check_interrupt() between steps, which raises KeyboardInterrupt from Python's signal state.
  set_interrupt_handler([] {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  });
}

}  // namespace veil::bind
