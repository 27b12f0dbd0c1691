// See device_filter.h.
#include "agent/host/device_filter.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/bpf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace drover::agent {
namespace {

bpf_insn Instruction(uint8_t code, uint8_t dst, uint8_t src, int16_t offset, int32_t immediate) {
  bpf_insn instruction{};
  instruction.code = code;
  instruction.dst_reg = dst & 0xf;
  instruction.src_reg = src & 0xf;
  instruction.off = offset;
  instruction.imm = immediate;
  return instruction;
}

// The program, over struct bpf_cgroup_dev_ctx {u32 access_type; u32 major; u32 minor;} in r1,
// where access_type's low 16 bits are the device type:
//   r2 = type, r3 = major, r4 = minor
//   for each denied device: if (r2 == char && r3 == major && r4 == minor) return 0
//   return 1
std::vector<bpf_insn> Program(const std::vector<DeviceNumber>& denied) {
  constexpr uint8_t kLoadWord = BPF_LDX | BPF_W | BPF_MEM;
  constexpr uint8_t kJumpIfNot = BPF_JMP | BPF_JNE | BPF_K;
  constexpr uint8_t kMove = BPF_ALU64 | BPF_MOV | BPF_K;
  constexpr uint8_t kExit = BPF_JMP | BPF_EXIT;
  std::vector<bpf_insn> program = {
      Instruction(kLoadWord, 2, 1, 0, 0),
      Instruction(BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, 0xffff),
      Instruction(kLoadWord, 3, 1, 4, 0),
      Instruction(kLoadWord, 4, 1, 8, 0),
  };
  for (const DeviceNumber& device : denied) {
    // Each test skips the rest of this device's block (the tests left and the refusal).
    program.push_back(Instruction(kJumpIfNot, 2, 0, 4, BPF_DEVCG_DEV_CHAR));
    program.push_back(Instruction(kJumpIfNot, 3, 0, 3, static_cast<int32_t>(device.major)));
    program.push_back(Instruction(kJumpIfNot, 4, 0, 2, static_cast<int32_t>(device.minor)));
    program.push_back(Instruction(kMove, 0, 0, 0, 0));
    program.push_back(Instruction(kExit, 0, 0, 0, 0));
  }
  program.push_back(Instruction(kMove, 0, 0, 0, 1));
  program.push_back(Instruction(kExit, 0, 0, 0, 0));
  return program;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string Why(int error) {
  std::string why = std::strerror(error);
  if (error == EPERM || error == EACCES) why += " (needs root, or CAP_BPF and CAP_SYS_ADMIN)";
  return why;
}

}  // namespace

std::string DeviceText(const DeviceNumber& device) {
  return fmt::format("{}:{}", device.major, device.minor);
}

Result<DeviceNumber> ParseDeviceNumber(std::string_view text) {
  DeviceNumber device;
  size_t colon = text.find(':');
  auto number = [](std::string_view part, uint32_t& out) {
    auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), out);
    return !part.empty() && error == std::errc() && end == part.data() + part.size();
  };
  if (colon == std::string_view::npos || !number(text.substr(0, colon), device.major) ||
      !number(text.substr(colon + 1), device.minor) || device.major > 0x7fffffff ||
      device.minor > 0x7fffffff)
    return MakeError(fmt::format("'{}': expected a device number MAJOR:MINOR", text));
  return device;
}

Result<DeviceNumber> CharDeviceAt(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    return MakeError(fmt::format("{}: {}", path.string(), std::strerror(errno)));
  if (!S_ISCHR(info.st_mode))
    return MakeError(fmt::format("{}: not a character device", path.string()));
  return DeviceNumber{major(info.st_rdev), minor(info.st_rdev)};
}

Status DenyDevices(const std::filesystem::path& cgroup, const std::vector<DeviceNumber>& denied) {
  if (denied.empty()) return OkStatus();
  std::vector<bpf_insn> program = Program(denied);
  char log[4096] = {};
  LIBBPF_OPTS(bpf_prog_load_opts, options, .log_level = 1, .log_size = sizeof log, .log_buf = log);
  Fd loaded(bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "drover_devices", "GPL", program.data(),
                          program.size(), &options));
  if (loaded.get() < 0) {
    int error = errno;
    return MakeError(fmt::format("load the device program for {}: {}{}", cgroup.string(),
                                 Why(error), log[0] ? fmt::format(" ({})", log) : ""));
  }
  Fd directory(::open(cgroup.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory.get() < 0)
    return MakeError(fmt::format("open {}: {}", cgroup.string(), std::strerror(errno)));
  if (bpf_prog_attach(loaded.get(), directory.get(), BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI) != 0)
    return MakeError(
        fmt::format("attach the device program to {}: {}", cgroup.string(), Why(errno)));
  return OkStatus();
}

}  // namespace drover::agent
