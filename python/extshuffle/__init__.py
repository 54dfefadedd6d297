"""extshuffle for Python: the permutation of the extshuffle tool as an
addressable index, a DistributedSampler for data loaders, shuffle() (the
tool's Job run from Python) and Dataset (the records of files read by their
number, through record indexes). See docs/python.md."""

from ._errors import Error, UsageError
from ._shuffle import shuffle

__all__ = ["Permutation", "epoch_seed", "DistributedSampler", "shuffle", "Dataset", "Error", "UsageError"]


# Loaded at their first use: DistributedSampler subclasses torch's own when
# torch imports, so importing extshuffle does not import torch; Permutation
# and Dataset import numpy, which shuffle() does not need (its child
# interpreter imports this package: numpy was most of its start-up).
_LAZY = {
    "Permutation": "._permutation",
    "epoch_seed": "._permutation",
    "Dataset": "._dataset",
    "DistributedSampler": "._sampler",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'extshuffle' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # the next lookup finds it without this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
