// extshuffle._native.Permutation and epoch_seed: the addressable permutation
// (extshuffle/modes/addressable_permutation.hpp). Long calls release the GIL
// and run Python's signal handlers every 20 ms (Ctrl-C raises
// KeyboardInterrupt at once, the call abandoned).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <memory>
#include <span>

#include "bindings.hpp"
#include "extshuffle/modes/addressable_permutation.hpp"

namespace py = pybind11;
using namespace py::literals;

namespace extshuffle::python {
namespace {

using modes::AddressablePermutation;

// Called, with the GIL, at every check the long calls make: the tests' way
// to know that a call is under way before they send it a signal.
py::object& interrupt_probe() {
  static py::object* probe = new py::object();  // never destroyed: outlives the interpreter's teardown
  return *probe;
}

// The interrupt check of one call: at most every 20 ms, the GIL taken,
// Python's pending signal handlers run; an exception they raise (Ctrl-C's
// KeyboardInterrupt) stays set and abandons the call.
class SignalCheck {
 public:
  bool operator()() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(20)) return false;
    last_ = now;
    py::gil_scoped_acquire gil;
    if (interrupt_probe() && !interrupt_probe().is_none()) {
      PyObject* result = PyObject_CallNoArgs(interrupt_probe().ptr());
      if (result == nullptr) return true;
      Py_DECREF(result);
    }
    return PyErr_CheckSignals() != 0;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Runs fn(options) with the GIL released; an interrupted call raises the
// exception the signal handler left (KeyboardInterrupt).
template <class Fn>
void run_interruptible(int threads, Fn&& fn) {
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    modes::EvaluationOptions options{threads, SignalCheck()};
    try {
      fn(options);
    } catch (const modes::Interrupted&) {
      interrupted = true;
    }
  }
  if (interrupted) {
    if (PyErr_Occurred() != nullptr) throw py::error_already_set();
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
}

// leaf_records and fanout: the CLI's testing knobs; 0 keeps the shipped constant.
std::unique_ptr<AddressablePermutation> make_permutation(std::uint64_t n, std::uint64_t seed,
                                                         std::uint64_t leaf_records, std::uint64_t fanout) {
  core::PlanConstants constants = core::kPlanV2;
  if (leaf_records != 0) constants.leaf_records = leaf_records;
  if (fanout != 0) constants.max_fanout = fanout;
  return std::make_unique<AddressablePermutation>(seed, n, constants);
}

// A writable C-contiguous one-dimensional array of 64-bit integers
// (numpy's uint64 or int64: the records, all below 2^56, are the same bits).
std::span<std::uint64_t> words_of(py::array& out) {
  const py::dtype type = out.dtype();
  if (out.ndim() != 1 || type.itemsize() != 8 || (type.kind() != 'u' && type.kind() != 'i') ||
      !(out.flags() & py::array::c_style) || !out.writeable()) {
    throw py::type_error("expected a writable contiguous 1-d array of uint64 or int64");
  }
  return {static_cast<std::uint64_t*>(out.mutable_data()), static_cast<std::size_t>(out.shape(0))};
}

void positions_into(AddressablePermutation& permutation, std::uint64_t first, std::uint64_t step, py::array out,
                    int threads) {
  const std::span<std::uint64_t> values = words_of(out);
  run_interruptible(
      threads, [&](const modes::EvaluationOptions& options) { permutation.positions(first, step, values, options); });
}

void records_into(AddressablePermutation& permutation, py::array values, int threads) {
  const std::span<std::uint64_t> words = words_of(values);
  run_interruptible(threads, [&](const modes::EvaluationOptions& options) { permutation.records_at(words, options); });
}

std::uint64_t at(AddressablePermutation& permutation, std::uint64_t position) {
  std::uint64_t record = 0;
  run_interruptible(0, [&](const modes::EvaluationOptions& options) { record = permutation.at(position, options); });
  return record;
}

}  // namespace

void bind_permutation(py::module_& module) {
  py::class_<AddressablePermutation>(module, "Permutation")
      .def(py::init(&make_permutation), "n"_a, "seed"_a, "leaf_records"_a = 0, "fanout"_a = 0)
      .def_property_readonly("n", &AddressablePermutation::size)
      .def_property_readonly("seed", &AddressablePermutation::seed)
      .def_property_readonly("leaf_records", [](const AddressablePermutation& p) { return p.constants().leaf_records; })
      .def_property_readonly("fanout", [](const AddressablePermutation& p) { return p.constants().max_fanout; })
      .def("at", &at, "position"_a)
      .def("positions_into", &positions_into, "first"_a, "step"_a, "out"_a, "threads"_a = 0)
      .def("records_into", &records_into, "values"_a, "threads"_a = 0)
      .def("position", &AddressablePermutation::position_of, "record"_a, py::call_guard<py::gil_scoped_release>());
  module.def("epoch_seed", &modes::epoch_seed, "seed"_a, "epoch"_a);
  module.def(
      "_set_interrupt_probe", [](py::object probe) { interrupt_probe() = std::move(probe); }, "probe"_a,
      "Calls probe() (or nothing, for None) at each signal check of a long call; for the tests.");
}

}  // namespace extshuffle::python
