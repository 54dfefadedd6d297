"""extshuffle for Python: the permutation of the extshuffle tool as an
addressable index, a DistributedSampler for data loaders, shuffle() (the
tool's Job run from Python) and Dataset (the records of files read by their
number, through record indexes). See docs/python.md."""

from ._dataset import Dataset
from ._errors import Error, UsageError
from ._permutation import Permutation, epoch_seed
from ._shuffle import shuffle

__all__ = ["Permutation", "epoch_seed", "DistributedSampler", "shuffle", "Dataset", "Error", "UsageError"]


def __getattr__(name):
    # DistributedSampler subclasses torch's own when torch imports: loaded at
    # its first use, so that importing extshuffle does not import torch.
    if name == "DistributedSampler":
        from ._sampler import DistributedSampler
        return DistributedSampler
    raise AttributeError(f"module 'extshuffle' has no attribute {name!r}")
