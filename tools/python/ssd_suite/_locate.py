"""Finds libssd-capi.so: $SSD_CAPI_LIBRARY, then the build tree of the checkout this package sits
in, then the install prefixes (this Python's and the usual ones), then the dynamic loader's path."""
import os
import sys

LIBRARY = "libssd-capi.so"


def candidates():
    """Paths to try, in order (the last entry is the bare name, for LD_LIBRARY_PATH)."""
    env = os.environ.get("SSD_CAPI_LIBRARY")
    if env:
        # An explicit choice is the only one: falling back would hide a wrong path.
        return [env]
    out = []
    here = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.normpath(os.path.join(here, "..", "..", ".."))  # tools/python/ssd_suite -> root
    for build in ("build", "build-debug"):
        out.append(os.path.join(checkout, build, "tools", "capi", LIBRARY))
    for prefix in (sys.prefix, os.environ.get("SSD_PREFIX"), "/usr/local"):
        if prefix:
            out.append(os.path.join(prefix, "lib", LIBRARY))
    out.append(LIBRARY)
    return out
