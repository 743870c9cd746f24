// A kernel library behind the kernel ABI, loaded from a shared object: by path, or by name from
// the suite's kernel directories (the fp32 emulation, its planted-bug variants, the CUDA kernels).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ssd/kernel_abi.h"
#include "ssd/reference/problem.h"

namespace ssd {

class KernelLibrary {
 public:
  // `spec` is a path (it contains '/' or ends in ".so") or a name: "emulation" opens
  // libssd-kernels-emulation.so from the first of $SSD_KERNEL_PATH (':'-separated folders), the
  // build tree's kernel folder, the installed one, and the dynamic loader's own search path.
  // Throws ArgumentError('kernels') for a library that cannot be found or opened, a missing
  // symbol or an ABI mismatch.
  static KernelLibrary open(const std::string& spec);
  // Wraps a table already in memory (checks its version).
  static KernelLibrary from_table(const ssd_kernel_table* table, std::string origin);
  // The names `open` resolves in the kernel folders (sorted), e.g. "emulation", "mutant-b_c_swapped".
  static std::vector<std::string> known_names();

  const ssd_kernel_table& table() const { return *table_; }
  const std::string& origin() const { return origin_; }
  // What was handed to dlopen (a path, or a bare file name for the loader's search path); empty
  // for a table wrapped with from_table. A worker process opens the library from it.
  const std::string& file() const { return file_; }
  bool implements(Op op) const;
  // Why the library cannot be called on this problem (it lacks the op, or its ABI version predates
  // an argument the problem uses: SKIPPED); nullopt when it can.
  std::optional<std::string> cannot_run(const Problem& p) const;
  // How the library declares its f32 dot products (ABI version 2; IEEE for version 1 or nothing said).
  DotPrecision f32_dots() const;
  // The problem as this library is judged on it: a library that declares TF32 dots turns dots=ieee
  // into dots=tf32 on the ops with dot products (the case it is judged on, printed in its repro).
  Problem as_declared(Problem p) const;

 private:
  std::shared_ptr<void> handle_;  // dlopen handle, closed with the last copy
  const ssd_kernel_table* table_ = nullptr;
  std::string origin_;
  std::string file_;
};

}  // namespace ssd
