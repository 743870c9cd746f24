"""Adapters for ssd_suite.fuzz: numpy_ref (an honest fp32 numpy port of chunk_cumsum,
chunk_coupling, state_passing and recurrent) and kernel_library (any kernel-ABI library, via the C API)."""
