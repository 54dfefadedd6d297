// The compiled part of the Python package: extshuffle._native. Bindings of
// the library only; the package's Python files (python/extshuffle) give
// them Python's conventions (docs/python.md).
#include <pybind11/pybind11.h>

#include "bindings.hpp"

PYBIND11_MODULE(_native, module) {
  module.doc() = "extshuffle's library, bound for Python (see the extshuffle package)";
  extshuffle::python::bind_permutation(module);
  extshuffle::python::bind_shuffle(module);
  extshuffle::python::bind_dataset(module);
}
