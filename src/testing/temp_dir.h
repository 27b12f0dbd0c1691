// A temporary directory for a test, removed with everything in it when the test is done.
// Test-only: never linked into a daemon.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace drover::testing {

class TempDir {
 public:
  // `prefix` names the directory under the system's temporary directory ("spawn_test.XXXXXX").
  explicit TempDir(const std::string& prefix = "drover_test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace drover::testing
