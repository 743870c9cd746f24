// LeakSanitizer suppressions for the golden tests (used by the debug preset's sanitizer build).
// HDF5 1.10 leaks a metadata cache entry (about 400 bytes) each time it finds a corrupted object
// header; the corruption tests make it do so on purpose, thousands of times.
extern "C" const char* __lsan_default_suppressions() { return "leak:libhdf5\n"; }
