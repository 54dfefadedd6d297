// extshuffle._native.Permutation and epoch_seed: the addressable permutation
// (extshuffle/modes/addressable_permutation.hpp). Long calls release the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <span>

#include "bindings.hpp"
#include "extshuffle/modes/addressable_permutation.hpp"

namespace py = pybind11;
using namespace py::literals;

namespace extshuffle::python {
namespace {

using modes::AddressablePermutation;

// leaf_records and fanout: the CLI's testing knobs; 0 keeps the shipped constant.
std::unique_ptr<AddressablePermutation> make_permutation(std::uint64_t n, std::uint64_t seed,
                                                         std::uint64_t leaf_records, std::uint64_t fanout) {
  core::PlanConstants constants = core::kPlanV2;
  if (leaf_records != 0) constants.leaf_records = leaf_records;
  if (fanout != 0) constants.max_fanout = fanout;
  return std::make_unique<AddressablePermutation>(seed, n, constants);
}

py::array_t<std::uint64_t> positions(AddressablePermutation& permutation, std::uint64_t first, std::uint64_t step,
                                     std::uint64_t count) {
  py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(count));
  const std::span<std::uint64_t> values(out.mutable_data(), count);
  py::gil_scoped_release release;
  permutation.positions(first, step, values);
  return out;
}

}  // namespace

void bind_permutation(py::module_& module) {
  py::class_<AddressablePermutation>(module, "Permutation")
      .def(py::init(&make_permutation), "n"_a, "seed"_a, "leaf_records"_a = 0, "fanout"_a = 0)
      .def_property_readonly("n", &AddressablePermutation::size)
      .def_property_readonly("seed", &AddressablePermutation::seed)
      .def_property_readonly("leaf_records", [](const AddressablePermutation& p) { return p.constants().leaf_records; })
      .def_property_readonly("fanout", [](const AddressablePermutation& p) { return p.constants().max_fanout; })
      .def("at", &AddressablePermutation::at, "position"_a, py::call_guard<py::gil_scoped_release>())
      .def("positions", &positions, "first"_a, "step"_a, "count"_a)
      .def("position", &AddressablePermutation::position_of, "record"_a, py::call_guard<py::gil_scoped_release>());
  module.def("epoch_seed", &modes::epoch_seed, "seed"_a, "epoch"_a);
}

}  // namespace extshuffle::python
