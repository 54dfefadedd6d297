"""The dataset the sampler tests load through torch: record i is the number i.
Imported after pytest.importorskip("torch")."""

from torch.utils.data import Dataset


class Records(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i
