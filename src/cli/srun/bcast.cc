// See bcast.h.
#include "cli/srun/bcast.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <set>
#include <sstream>

#include "common/elf_dependencies.h"
#include "common/text.h"

namespace drover::cli {
namespace {

// Where the loader looks after the paths a file names (ld.so(8), without its cache).
constexpr const char* kSystemLibraryDirs[] = {"/lib/x86_64-linux-gnu",
                                              "/usr/lib/x86_64-linux-gnu",
                                              "/lib/aarch64-linux-gnu",
                                              "/usr/lib/aarch64-linux-gnu",
                                              "/lib64",
                                              "/usr/lib64",
                                              "/lib",
                                              "/usr/lib"};

bool IsRegularFile(const std::string& path, bool executable) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         (!executable || ::access(path.c_str(), X_OK) == 0);
}

std::string Absolute(const std::string& path, const std::string& base) {
  return path.starts_with('/') ? path : base + "/" + path;
}

std::string Directory(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

std::string Variable(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// The command as execvp finds it along srun's PATH; empty when there is none.
std::string FindProgram(const std::string& command, const std::string& cwd,
                        const std::map<std::string, std::string>& env) {
  if (command.find('/') != std::string::npos) return Absolute(command, cwd);
  for (const std::string& dir : Split(Variable(env, "PATH"), ':')) {
    std::string candidate = Absolute((dir.empty() ? "." : dir) + "/" + command, cwd);
    if (IsRegularFile(candidate, true)) return candidate;
  }
  return "";
}

bool Excluded(const std::string& path, const std::vector<std::string>& exclude) {
  std::string dir = Directory(path);
  return std::any_of(exclude.begin(), exclude.end(), [&](std::string prefix) {
    while (prefix.size() > 1 && prefix.ends_with('/')) prefix.pop_back();
    return dir == prefix || dir.starts_with(prefix + "/");
  });
}

Result<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(fmt::format("cannot read {}", path));
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Where the loader finds `soname` for `from` (a file whose dependencies these are).
std::string FindLibrary(const std::string& soname, const ElfDependencies& from,
                        const std::string& from_path,
                        const std::map<std::string, std::string>& env) {
  std::vector<std::string> dirs;
  auto add = [&](const std::vector<std::string>& list) {
    for (std::string dir : list) {
      if (size_t at = dir.find("$ORIGIN"); at != std::string::npos)
        dir.replace(at, 7, Directory(from_path));
      dirs.push_back(dir);
    }
  };
  if (from.runpath.empty()) add(from.rpath);
  add(Split(Variable(env, "LD_LIBRARY_PATH"), ':'));
  add(from.runpath);
  for (const char* dir : kSystemLibraryDirs) dirs.emplace_back(dir);
  for (const std::string& dir : dirs)
    if (!dir.empty() && IsRegularFile(dir + "/" + soname, false)) return dir + "/" + soname;
  return "";
}

v1::StepLaunch::BcastFile FileOf(const std::string& path, std::string data, bool library) {
  struct stat info {};
  (void)::stat(path.c_str(), &info);
  v1::StepLaunch::BcastFile file;
  file.set_path(path);
  file.set_data(std::move(data));
  file.set_mode(info.st_mode & 07777);
  file.set_library(library);
  return file;
}

}  // namespace

Result<std::optional<BcastRequest>> BcastRequestOf(const ParsedOptions& parsed,
                                                   const LaunchSettings& settings,
                                                   const std::string& command,
                                                   const std::string& work_dir,
                                                   const std::map<std::string, std::string>& env) {
  if (!parsed.Has("bcast")) return std::optional<BcastRequest>();
  BcastRequest request;
  request.program = FindProgram(command, work_dir, env);
  if (request.program.empty() || !IsRegularFile(request.program, false))
    return MakeError(fmt::format("--bcast: cannot find the program {} to copy", command));
  std::string given = parsed.Last("bcast").value_or("");
  if (!given.empty())
    request.destination = Absolute(given, work_dir);
  else
    request.destination =
        (settings.bcast_dest_dir.empty() ? work_dir : settings.bcast_dest_dir) + "/";
  std::string send = ToLower(parsed.Last("send-libs").value_or(""));
  if (parsed.Has("send-libs") && send.empty()) send = "yes";  // --send-libs alone
  if (!send.empty() && send != "yes" && send != "no")
    return MakeError(fmt::format("Invalid --send-libs value: {}", send));
  request.send_libs = send.empty() ? settings.bcast_send_libs : send == "yes";
  std::string exclude = parsed.Last("bcast-exclude").value_or(settings.bcast_exclude);
  if (!EqualsIgnoreCase(exclude, "none"))
    for (const std::string& dir : Split(exclude, ',')) {
      if (!Trim(dir).starts_with('/'))
        return MakeError(fmt::format("--bcast-exclude: {} is not an absolute path", dir));
      request.exclude.emplace_back(Trim(dir));
    }
  return std::optional<BcastRequest>(std::move(request));
}

Result<std::vector<v1::StepLaunch::BcastFile>> ReadBcastFiles(
    const BcastRequest& request, const std::map<std::string, std::string>& env) {
  std::vector<v1::StepLaunch::BcastFile> files;
  uint64_t total = 0;
  auto add = [&](const std::string& path, std::string data, bool library) -> Status {
    total += data.size();
    if (total > kMostBcastBytes)
      return MakeError(fmt::format(
          "--bcast: {}{} come to more than {} MiB, the most a step's launch carries; copy it to "
          "a file system the nodes share instead",
          request.program, request.send_libs ? " and its libraries" : "", kMostBcastBytes >> 20));
    files.push_back(FileOf(path, std::move(data), library));
    return OkStatus();
  };
  auto program = ReadWhole(request.program);
  if (!program) return std::move(program).take_error();
  std::string bytes = *program;
  if (Status ok = add(request.program, std::move(*program), false); !ok)
    return std::move(ok).take_error();
  files.back().set_path(request.destination);  // where the nodes write it
  if (!request.send_libs) return files;
  // Breadth first over the dependencies, each library once, excluded directories skipped.
  std::deque<std::pair<std::string, std::string>> pending{{request.program, std::move(bytes)}};
  std::set<std::string> seen;
  while (!pending.empty()) {
    auto [path, data] = std::move(pending.front());
    pending.pop_front();
    auto dependencies = ReadElfDependencies(data);
    if (!dependencies) continue;  // a script or a foreign file: nothing the loader reads
    for (const std::string& soname : dependencies->needed) {
      std::string found = FindLibrary(soname, *dependencies, path, env);
      if (found.empty() || Excluded(found, request.exclude) || !seen.insert(soname).second)
        continue;
      auto library = ReadWhole(found);
      if (!library) return std::move(library).take_error();
      pending.emplace_back(found, *library);
      if (Status ok = add(found, std::move(*library), true); !ok) return std::move(ok).take_error();
      files.back().set_path(soname);  // in the directory beside the program's copy
    }
  }
  return files;
}

bool CompressLaunch(const ParsedOptions& parsed, const LaunchSettings& settings) {
  if (!parsed.Has("compress")) return false;
  std::string type = parsed.Last("compress").value_or("");
  if (type.empty()) type = settings.bcast_compression.empty() ? "lz4" : settings.bcast_compression;
  if (EqualsIgnoreCase(type, "lz4")) return true;
  if (!EqualsIgnoreCase(type, "none"))
    std::fprintf(stderr,
                 "srun: error: Compression type '%s' unknown, disabling compression support.\n",
                 type.c_str());
  return false;
}

}  // namespace drover::cli
