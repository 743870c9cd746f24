"""Run by any Python 3.9+ (numpy or not): the package imports through ctypes without a rebuild and
reads a problem string, a fuzz case and shrink candidates. Exit 0 when all hold."""
import sys

import ssd_suite

p = ssd_suite.Problem("SSDRecurrentFwd:bf16 seed=5 b1 h2 p4 g1 n4 +z state=bf16")
assert str(p) == "recurrent:bf16 b1 h2 p4 g1 n4 +z state=bf16 seed=5", str(p)
assert p.sizes == {"b": 1, "h": 2, "p": 4, "g": 1, "n": 4} and p.flags == {"z"}
case = ssd_suite.campaign_problem("chunk_cumsum", 3, seed=7)
assert case.op == "chunk_cumsum" and case.valid
assert all(c.valid for c in ssd_suite.shrink_candidates(p))
print(f"ssd_suite on Python {sys.version.split()[0]}: C API {ssd_suite.capi_version()}, {p}")
