"""A torch-free stand-in for a tensor's metadata (sizes, strides in elements, dtype, data pointer,
device): what tools/external/flashinfer/flashinfer_shim.py reads, so that its wrapper and the shim
library's argument checks can be tested on a host without torch or a GPU. Its pointers are fake
addresses: anything that dereferences them is a bug of the test."""
import itertools

TORCH_DTYPES = {"f32": "torch.float32", "f16": "torch.float16", "bf16": "torch.bfloat16", "i32": "torch.int32",
                "i64": "torch.int64", "i16": "torch.int16"}
_addresses = itertools.count(1 << 32, 1 << 24)  # 16 MiB apart, 256-byte aligned


class Device:
    def __init__(self, index):
        self.type, self.index = ("cuda", index) if index is not None else ("cpu", None)


class FakeTensor:
    def __init__(self, shape, dtype="f32", strides=None, cuda=True, data=None):
        self.shape = tuple(int(n) for n in shape)
        if strides is None:  # row-major
            strides, step = [], 1
            for n in reversed(self.shape):
                strides.insert(0, step)
                step *= max(n, 1)
        self.strides = tuple(int(s) for s in strides)
        self.dtype = TORCH_DTYPES.get(dtype, dtype)
        self.is_cuda = cuda
        self.device = Device(0 if cuda else None)
        self._data = next(_addresses) if data is None else data

    def dim(self):
        return len(self.shape)

    def size(self, i=None):
        return self.shape if i is None else self.shape[i]

    def stride(self, i=None):
        return self.strides if i is None else self.strides[i]

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def data_ptr(self):
        return self._data

    def unsqueeze(self, d):
        """torch's: a size-1 axis at d, its stride that of the axis it precedes times its size."""
        d = d if d >= 0 else d + self.dim() + 1
        stride = self.strides[d] * self.shape[d] if d < self.dim() else 1
        return FakeTensor(self.shape[:d] + (1,) + self.shape[d:], self.dtype, self.strides[:d] + (stride,) + self.strides[d:],
                          self.is_cuda, self._data)

    def squeeze(self, d):
        d = d if d >= 0 else d + self.dim()
        if self.shape[d] != 1:
            return self
        return FakeTensor(self.shape[:d] + self.shape[d + 1:], self.dtype, self.strides[:d] + self.strides[d + 1:],
                          self.is_cuda, self._data)

    def __repr__(self):
        return f"FakeTensor({self.dtype} {self.shape} strides {self.strides})"


def placed(value):
    """An adapter's Host argument (ssd_suite.adapters.flashinfer.Host) as a FakeTensor: its array's
    shape, contiguous, with the stride-0 trailing axes of expand_to."""
    shape = value.array.shape
    tensor = FakeTensor(shape, value.dtype)
    if value.expand_to is None:
        return tensor
    extra = len(value.expand_to) - len(shape)
    return FakeTensor(value.expand_to, value.dtype, tensor.strides + (0,) * extra)
