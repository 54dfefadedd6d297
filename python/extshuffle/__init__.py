"""extshuffle for Python: the permutation of the extshuffle tool as an
addressable index, a DistributedSampler for data loaders, shuffle() (the
tool's Job run from Python) and Dataset (the records of files read by their
number, through record indexes). See docs/python.md."""

from ._dataset import Dataset
from ._errors import Error, UsageError
from ._permutation import Permutation, epoch_seed
from ._sampler import DistributedSampler
from ._shuffle import shuffle

__all__ = ["Permutation", "epoch_seed", "DistributedSampler", "shuffle", "Dataset", "Error", "UsageError"]
