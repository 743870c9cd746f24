"""Adapters for ssd_suite.fuzz: numpy_ref (an honest fp32 numpy port of chunk_cumsum and
recurrent) and kernel_library (any library behind the kernel ABI, through the C API)."""
