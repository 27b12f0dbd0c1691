// For sbatch's option tests only: ParseSbatch over an in-memory set of files and a fixed
// environment, clock (kNow) and working directory, so every test states what it reads. Never
// included by the library.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/sbatch/sbatch_options.h"

namespace drover::cli {

// --begin and --deadline read local time; the expectations are in UTC.
class UtcEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};
// Registered once for the whole test binary, whichever test file includes this first.
[[maybe_unused]] inline ::testing::Environment* const kUtc =
    ::testing::AddGlobalTestEnvironment(new UtcEnvironment);

inline constexpr int64_t kNow = 1700000000;  // 2023-11-14T22:13:20Z
inline constexpr std::string_view kTry = "\nTry \"sbatch --help\" for more information";
inline constexpr char kCwd[] = "/home/alice/work";

class Sbatch : public ::testing::Test {
 protected:
  std::map<std::string, std::string> files = {
      {"/home/alice/work/job.sh", "#!/bin/bash\nsrun hostname\n"}};
  std::map<std::string, std::string> environment = {{"HOME", "/home/alice"},
                                                    {"PATH", "/usr/local/bin:/usr/bin"}};
  std::vector<std::string> reads;
  uint32_t uid = 1000;

  Result<SbatchRequest> Run(std::vector<std::string> args) {
    ReadFile read = [this](const std::string& path) -> Result<std::string> {
      reads.push_back(path);
      auto found = files.find(path);
      if (found == files.end()) return MakeError("No such file or directory");
      return found->second;
    };
    return ParseSbatch(args, read, environment, kCwd, uid, 100, "alice", kNow);
  }

  SbatchRequest Ok(std::vector<std::string> args) {
    Result<SbatchRequest> request = Run(std::move(args));
    EXPECT_TRUE(request.ok()) << request.error();
    return request.ok() ? std::move(request).value() : SbatchRequest{};
  }

  std::string Fails(std::vector<std::string> args) {
    Result<SbatchRequest> request = Run(std::move(args));
    EXPECT_FALSE(request.ok());
    return request.ok() ? "" : request.error();
  }

  // A job script with these lines after "#!/bin/bash".
  void Script(const std::string& body) {
    files["/home/alice/work/job.sh"] = "#!/bin/bash\n" + body + "\nsrun hostname\n";
  }
};

inline bool Has(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

inline bool HasName(const std::vector<std::string>& environment, const std::string& name) {
  return std::any_of(environment.begin(), environment.end(),
                     [&](const std::string& entry) { return entry.starts_with(name + "="); });
}

}  // namespace drover::cli
