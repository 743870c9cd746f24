// Whole-file reads, atomic writes that skip unchanged content, and SHA-256 (OpenSSL).
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "ssd/golden/case_file.h"
#include "ssd/reference/errors.h"

namespace ssd {

namespace fs = std::filesystem;

std::string sha256_hex(std::span<const std::uint8_t> bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1 || length != 32)
    throw ArgumentError("bytes", "OpenSSL could not compute a SHA-256");
  static const char* hex = "0123456789abcdef";
  std::string out(2 * length, '0');
  for (unsigned int i = 0; i < length; ++i) {
    out[2 * i] = hex[digest[i] >> 4];
    out[2 * i + 1] = hex[digest[i] & 15];
  }
  return out;
}

namespace {

std::string system_error_text(int error) { return std::strerror(error); }

// Closes a descriptor on every path out of a scope.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::vector<std::uint8_t> read_file_bytes(const fs::path& path) {
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) throw ArgumentError(path.string(), "cannot open: " + system_error_text(errno));
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) throw ArgumentError(path.string(), "cannot stat: " + system_error_text(errno));
  if (!S_ISREG(info.st_mode)) throw ArgumentError(path.string(), "not a regular file");
  std::vector<std::uint8_t> bytes;
  bytes.reserve(static_cast<std::size_t>(info.st_size));
  std::uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(file.fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw ArgumentError(path.string(), "cannot read: " + system_error_text(errno));
    }
    if (got == 0) break;
    bytes.insert(bytes.end(), buffer, buffer + got);
  }
  return bytes;
}

WriteOutcome write_file_if_changed(const fs::path& path, std::span<const std::uint8_t> bytes,
                                   const std::function<void(const fs::path&)>& before_rename) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  const bool exists = fs::exists(status);
  if (exists && !fs::is_regular_file(status)) throw ArgumentError(path.string(), "exists and is not a regular file");
  if (exists) {
    const std::vector<std::uint8_t> current = read_file_bytes(path);
    if (current.size() == bytes.size() && std::equal(current.begin(), current.end(), bytes.begin()))
      return WriteOutcome::unchanged;
  }

  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  // The temporary lives beside the target so that the rename is atomic (same file system); the
  // leading dot and the suffix keep it out of anything that lists *.h5.
  std::string leaf(".");  // appended, not "literal" + string: GCC 12 warns falsely (-Wrestrict)
  leaf.append(path.filename().string()).append(".tmp-XXXXXX");
  std::string tmp_name = (directory / leaf).string();
  FileDescriptor file{::mkstemp(tmp_name.data())};
  if (file.fd < 0) throw ArgumentError(path.string(), "cannot create a temporary file: " + system_error_text(errno));
  const fs::path tmp(tmp_name);
  try {
    if (::fchmod(file.fd, 0644) != 0)
      throw ArgumentError(path.string(), "cannot set permissions: " + system_error_text(errno));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t wrote = ::write(file.fd, bytes.data() + done, bytes.size() - done);
      if (wrote < 0) {
        if (errno == EINTR) continue;
        throw ArgumentError(path.string(), "cannot write: " + system_error_text(errno));
      }
      done += static_cast<std::size_t>(wrote);
    }
    // On disk before the rename: a crash then leaves the old file or the new one, never half.
    if (::fsync(file.fd) != 0) throw ArgumentError(path.string(), "cannot flush: " + system_error_text(errno));
    const int fd = std::exchange(file.fd, -1);
    if (::close(fd) != 0) throw ArgumentError(path.string(), "cannot close: " + system_error_text(errno));
    if (before_rename) before_rename(tmp);
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      throw ArgumentError(path.string(), "cannot rename the temporary into place: " + system_error_text(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  // The rename itself is durable once the directory entry is on disk.
  FileDescriptor dir{::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd >= 0) ::fsync(dir.fd);
  return exists ? WriteOutcome::replaced : WriteOutcome::created;
}

}  // namespace ssd
