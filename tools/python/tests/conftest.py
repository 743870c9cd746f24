"""The package's tests run from the checkout: the package folder goes first on sys.path, so the
tests need no installation; the C API comes from $SSD_CAPI_LIBRARY or the build tree."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # planted_bug.py
