// libFuzzer target for the agent's spool reader (agent/stepd/spool.h): the first byte picks the
// file — launch, environ or status — and the rest is written as that file of a job directory,
// then read back as the agent and the supervisor read it. What reads is written again and must
// read back the same. The directory is a fresh one for each fuzzer process, in /dev/shm where there
// is one.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "agent/stepd/spool.h"

namespace {

namespace fs = std::filesystem;
using namespace drover;
using namespace drover::agent;

// <tmp>/drover-spool-fuzz.XXXXXX/{in,out}, made once and removed at exit.
struct Directories {
  fs::path root, in, out;
  Directories() {
    // Memory-backed where there is one: the status is fsynced, and a disk would set the pace.
    std::error_code error;
    fs::path base = fs::is_directory("/dev/shm", error) ? "/dev/shm" : fs::temp_directory_path();
    std::string pattern = (base / "drover-spool-fuzz.XXXXXX").string();
    if (!mkdtemp(pattern.data())) __builtin_trap();
    root = pattern;
    in = root / "in";
    out = root / "out";
    fs::create_directory(in);
    fs::create_directory(out);
  }
  ~Directories() {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
};

const Directories& Dirs() {
  static const Directories dirs;
  return dirs;
}

void WriteFile(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) __builtin_trap();
}

template <typename T>
bool Failed(const Result<T>& result) {
  if (!result.ok() && result.error().empty()) __builtin_trap();  // every failure says why
  return !result.ok();
}

void CheckLaunch() {
  auto launch = ReadLaunch(Dirs().in);
  if (Failed(launch)) return;
  if (!WriteLaunch(Dirs().out, *launch).ok()) __builtin_trap();
  auto again = ReadLaunch(Dirs().out);
  if (!again.ok() || !(*again == *launch)) __builtin_trap();
}

void CheckEnvironment() {
  auto environment = ReadEnvironment(Dirs().in);
  if (Failed(environment)) return;
  if (!WriteEnvironment(Dirs().out, *environment).ok()) __builtin_trap();
  auto again = ReadEnvironment(Dirs().out);
  if (!again.ok() || *again != *environment) __builtin_trap();
}

void CheckStatus() {
  auto status = ReadStatus(Dirs().in);
  if (Failed(status)) return;
  if (!WriteStatus(Dirs().out, *status).ok()) __builtin_trap();
  auto again = ReadStatus(Dirs().out);
  if (!again.ok()) __builtin_trap();
  // cpu_seconds is written with three decimals; everything else exactly.
  if (std::abs(again->cpu_seconds - status->cpu_seconds) > 0.0005) __builtin_trap();
  BatchStatus rounded = *status;
  rounded.cpu_seconds = again->cpu_seconds;
  if (!(*again == rounded)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      WriteFile(Dirs().in / "launch", text);
      CheckLaunch();
      break;
    case 1:
      WriteFile(Dirs().in / "environ", text);
      CheckEnvironment();
      break;
    case 2:
      WriteFile(Dirs().in / "status", text);
      CheckStatus();
      break;
  }
  return 0;
}
