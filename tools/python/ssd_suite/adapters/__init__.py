"""Adapters for ssd_suite.fuzz: numpy_ref (an honest fp32 numpy port of chunk_cumsum,
chunk_coupling and recurrent) and kernel_library (any library behind the kernel ABI, via the C API)."""
