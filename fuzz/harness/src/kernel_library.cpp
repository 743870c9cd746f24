// Finding, opening and checking kernel libraries.
#include "ssd/harness/kernel_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "ssd/reference/errors.h"
#include "ssd/reference/op_spec.h"

namespace ssd {
namespace {

constexpr const char* kPrefix = "libssd-kernels-";
constexpr const char* kSuffix = ".so";

// Folders searched for a library given by name, in order.
std::vector<std::filesystem::path> kernel_folders() {
  std::vector<std::filesystem::path> folders;
  if (const char* env = std::getenv("SSD_KERNEL_PATH")) {
    std::stringstream list(env);
    for (std::string folder; std::getline(list, folder, ':');)
      if (!folder.empty()) folders.emplace_back(folder);
  }
#ifdef SSD_BUILD_KERNEL_DIR
  folders.emplace_back(SSD_BUILD_KERNEL_DIR);
#endif
#ifdef SSD_INSTALL_KERNEL_DIR
  folders.emplace_back(SSD_INSTALL_KERNEL_DIR);
#endif
  return folders;
}

bool is_path(const std::string& spec) {
  return spec.find('/') != std::string::npos ||
         (spec.size() > 3 && spec.compare(spec.size() - 3, 3, kSuffix) == 0) || spec.find(".so.") != std::string::npos;
}

// The file to dlopen for a spec: a path as given; a name as the first existing file in the
// kernel folders, else the bare file name for the dynamic loader (LD_LIBRARY_PATH, RUNPATH).
std::string resolve(const std::string& spec) {
  if (is_path(spec)) return spec;
  for (char c : spec)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      throw ArgumentError("kernels", "'" + spec + "' is neither a path nor a kernel library name (letters, digits, '-', '_', '.')");
  const std::string file = kPrefix + spec + kSuffix;
  for (const auto& folder : kernel_folders()) {
    std::error_code ignored;
    if (std::filesystem::is_regular_file(folder / file, ignored)) return (folder / file).string();
  }
  return file;
}

}  // namespace

KernelLibrary KernelLibrary::from_table(const ssd_kernel_table* table, std::string origin) {
  if (table == nullptr) throw ArgumentError("kernels", origin + ": the table is NULL");
  if (table->abi_version < SSD_KERNEL_ABI_OLDEST_VERSION || table->abi_version > SSD_KERNEL_ABI_VERSION)
    throw ArgumentError("kernels", origin + ": kernel ABI version " + std::to_string(table->abi_version) +
                                       ", this runner speaks versions " + std::to_string(SSD_KERNEL_ABI_OLDEST_VERSION) +
                                       " to " + std::to_string(SSD_KERNEL_ABI_VERSION));
  if (table->abi_version >= 2 && table->f32_dot_precision != SSD_DOTS_IEEE && table->f32_dot_precision != SSD_DOTS_TF32)
    throw ArgumentError("kernels", origin + ": unknown f32_dot_precision " + std::to_string(table->f32_dot_precision));
  if (table->memory_kind != SSD_MEMORY_HOST && table->memory_kind != SSD_MEMORY_CUDA)
    throw ArgumentError("kernels", origin + ": unknown memory kind " + std::to_string(table->memory_kind));
  KernelLibrary library;
  library.table_ = table;
  library.origin_ = std::move(origin);
  return library;
}

KernelLibrary KernelLibrary::open(const std::string& spec) {
  if (spec.empty()) throw ArgumentError("kernels", "empty library name");
  const std::string file = resolve(spec);
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::string hint;
    if (!is_path(spec)) {
      // The planted-bug variants collapse into one entry, so the message stays one short line.
      std::size_t mutants = 0;
      hint = " (known names:";
      for (const auto& name : known_names())
        if (name.starts_with("mutant-")) ++mutants;
        else hint += " " + name;
      if (mutants) hint += " mutant-<flaw> (" + std::to_string(mutants) + ")";
      hint += known_names().empty() ? " none found; set SSD_KERNEL_PATH)" : ")";
    }
    throw ArgumentError("kernels", "cannot open '" + spec + "': " + dlerror() + hint);
  }
  std::shared_ptr<void> owner(handle, [](void* h) { dlclose(h); });
  void* symbol = dlsym(handle, SSD_KERNEL_TABLE_SYMBOL);
  if (symbol == nullptr) throw ArgumentError("kernels", spec + " does not export " SSD_KERNEL_TABLE_SYMBOL "()");
  const auto get_table = reinterpret_cast<ssd_kernel_table_fn>(symbol);
  KernelLibrary library = from_table(get_table(), spec);
  library.handle_ = std::move(owner);
  library.file_ = file;
  return library;
}

std::vector<std::string> KernelLibrary::known_names() {
  std::vector<std::string> names;
  const std::string prefix = kPrefix, suffix = kSuffix;
  for (const auto& folder : kernel_folders()) {
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ignored)) {
      const std::string file = entry.path().filename().string();
      if (file.size() > prefix.size() + suffix.size() && file.starts_with(prefix) && file.ends_with(suffix))
        names.push_back(file.substr(prefix.size(), file.size() - prefix.size() - suffix.size()));
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool KernelLibrary::implements(Op op) const { return op_spec(op).abi.implemented_by(*table_); }

std::optional<std::string> KernelLibrary::cannot_run(const Problem& p) const {
  if (!implements(p.op)) return origin_ + " does not implement " + std::string(op_name(p.op));
  const std::uint32_t needed = op_spec(p.op).abi.version_needed(p);
  if (table_->abi_version < needed)
    return origin_ + " speaks kernel ABI version " + std::to_string(table_->abi_version) + ", this case needs version " +
           std::to_string(needed) + " (docs/kernel-abi.md)";
  return std::nullopt;
}

DotPrecision KernelLibrary::f32_dots() const {
  // A version-1 table ends before the field: it declares nothing, so IEEE.
  return table_->abi_version >= 2 && table_->f32_dot_precision == SSD_DOTS_TF32 ? DotPrecision::tf32 : DotPrecision::ieee;
}

Problem KernelLibrary::as_declared(Problem p) const {
  if (f32_dots() == DotPrecision::tf32 && op_spec(p.op).takes_flag("dots")) p.dots = DotPrecision::tf32;
  return p;
}

}  // namespace ssd
