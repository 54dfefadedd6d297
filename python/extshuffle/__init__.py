"""extshuffle for Python: the permutation of the extshuffle tool as an
addressable index, a DistributedSampler for data loaders, and shuffle(),
the tool's Job run from Python. See docs/python.md."""

from ._errors import Error, UsageError
from ._permutation import Permutation, epoch_seed
from ._sampler import DistributedSampler
from ._shuffle import shuffle

__all__ = ["Permutation", "epoch_seed", "DistributedSampler", "shuffle", "Error", "UsageError"]
