// sbcast (sbcast(1)): copies a file to every node of a running job, as the job's user, so its
// steps read a local copy. The nodes' agents are reached directly, as sstat reaches them: each
// one writes the file only for the job's owner (or root, SlurmUser) while the job runs there.
// The file travels in pieces of --size bytes, to --fanout nodes at once.
#include <fcntl.h>
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "auth/grpc_auth.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/query/query_common.h"
#include "cli/srun/bcast.h"
#include "common/agent_address.h"
#include "common/getopt.h"
#include "common/hostlist.h"
#include "common/launch_settings.h"
#include "common/text.h"

namespace drover::cli {
namespace {

const OptionSpec kSpecs[] = {
    {'C', "compress", OptionSpec::kOptional}, {0, "exclude", OptionSpec::kRequired},
    {'F', "fanout", OptionSpec::kRequired},   {'f', "force", OptionSpec::kNone},
    {'j', "jobid", OptionSpec::kRequired},    {'p', "preserve", OptionSpec::kNone},
    {0, "send-libs", OptionSpec::kOptional},  {'s', "size", OptionSpec::kRequired},
    {'t', "timeout", OptionSpec::kRequired},  {'v', "verbose", OptionSpec::kNone},
    {'V', "version", OptionSpec::kNone},      {'h', "help", OptionSpec::kNone},
    {0, "usage", OptionSpec::kNone},
};

constexpr char kUsage[] = "Usage: sbcast [-CfFjpstvV] SOURCE DEST\n";
constexpr char kHelp[] =
    "Usage: sbcast [OPTIONS] SOURCE DEST\n"
    "  -C, --compress[=lib]  compress the file being transmitted\n"
    "  --exclude=<NONE|path1,...,pathN> exclude these directories' libraries (--send-libs)\n"
    "  -f, --force           replace destination file as required\n"
    "  -F, --fanout=num      specify message fanout\n"
    "  -j, --jobid=#         specify job ID\n"
    "  -p, --preserve        preserve modes and times of source file\n"
    "  --send-libs[=yes|no]  autodetect and broadcast executable's shared objects\n"
    "  -s, --size=num        block size in bytes (rounded off)\n"
    "  -t, --timeout=secs    specify message timeout (seconds)\n"
    "  -v, --verbose         provide detailed event logging\n"
    "  -V, --version         print version information and exit\n"
    "\nHelp options:\n"
    "  --help                show this help message\n"
    "  --usage               display brief usage message\n";

constexpr uint64_t kDefaultPiece = uint64_t{8} << 20;  // sbcast(1): 8 MB blocks
constexpr uint64_t kMostPiece = uint64_t{64} << 20;

int Error(const std::string& message) {
  std::fprintf(stderr, "sbcast: error: %s\n", message.c_str());
  return 1;
}

// "-s 512k", "-s 4m", "-s 1048576".
std::optional<uint64_t> ParseSize(std::string text) {
  uint64_t scale = 1;
  if (!text.empty() && (text.back() == 'k' || text.back() == 'K')) scale = 1024;
  if (!text.empty() && (text.back() == 'm' || text.back() == 'M')) scale = 1024 * 1024;
  if (scale != 1) text.pop_back();
  std::optional<uint64_t> number = ParseUint64(text);
  if (!number || *number == 0 || *number > kMostPiece / scale) return std::nullopt;
  return *number * scale;
}

// One file (or directory) to make on the nodes: the source file is read piece by piece from
// `fd` as it is sent (pread: every sending thread reads its own pieces), never whole; the
// libraries --send-libs found are in `data` already.
struct Copy {
  std::string source, destination;  // the destination on the nodes
  int fd = -1;
  std::string data;
  uint64_t size = 0;
  uint32_t mode = 0644;
  int64_t atime = 0, mtime = 0;
  bool directory = false;  // --send-libs' directory, made before its libraries
};

}  // namespace

std::vector<OptionSpec> SbcastOptionTable() {
  return {std::begin(kSpecs), std::end(kSpecs)};
}

int RunSbcast(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("sbcast", parsed.error());
  if (parsed->Has("help")) return std::fputs(kHelp, stdout) < 0 ? 1 : 0;
  if (parsed->Has("usage")) return std::fputs(kUsage, stdout) < 0 ? 1 : 0;
  if (parsed->Has("version")) return PrintSlurmVersion();
  if (parsed->operands.size() != 2) {
    std::fputs("sbcast: error: Need two file names, have ", stderr);
    std::fprintf(stderr, "%zu names\n", parsed->operands.size());
    std::fputs(kUsage, stderr);
    return 1;
  }
  LaunchSettings settings = ReadLaunchSettings(ResolveConfPath(""));
  const std::string source = parsed->operands[0];
  std::string destination = parsed->operands[1];
  // A relative destination goes under BcastParameters' DestDir, else the current directory.
  if (!destination.starts_with('/'))
    destination = (settings.bcast_dest_dir.empty() ? CurrentDirectory() : settings.bcast_dest_dir) +
                  "/" + destination;
  std::string job_text = parsed->Last("jobid").value_or("");
  if (job_text.empty()) {
    const char* from_env = std::getenv("SLURM_JOB_ID");
    if (!from_env) from_env = std::getenv("SLURM_JOBID");
    if (!from_env || !*from_env) return Error("Need a job id, run under salloc or specify --jobid");
    job_text = from_env;
  }
  if (job_text.find('.') != std::string::npos)
    return Error(
        fmt::format("--jobid={}: Drover's sbcast copies to every node of the job; give "
                    "the job ID alone",
                    job_text));
  std::optional<uint64_t> job_id = ParseUint64(job_text);
  if (!job_id || *job_id == 0) return Error(fmt::format("Invalid job id {}", job_text));
  uint64_t piece_size = kDefaultPiece;
  if (auto size = parsed->Last("size")) {
    std::optional<uint64_t> bytes = ParseSize(*size);
    if (!bytes) return Error(fmt::format("Invalid size value ({}): 1 byte to 64m", *size));
    piece_size = *bytes;
  }
  int fanout = 8, timeout = 0;
  if (auto given = parsed->Last("fanout")) {
    std::optional<int64_t> number = ParseInt64(*given);
    if (!number || *number < 1 || *number > 1024) return Error("Invalid fanout value: " + *given);
    fanout = static_cast<int>(*number);
  }
  if (auto given = parsed->Last("timeout")) {
    std::optional<int64_t> number = ParseInt64(*given);
    if (!number || *number < 1 || *number > 86400) return Error("Invalid timeout value: " + *given);
    timeout = static_cast<int>(*number);
  }
  bool compress = false;
  if (parsed->Has("compress")) {
    std::string kind = ToLower(parsed->Last("compress").value_or(""));
    if (kind.empty())
      kind = settings.bcast_compression.empty() ? "lz4" : settings.bcast_compression;
    if (kind != "lz4" && kind != "none" && kind != "zlib")
      return Error(fmt::format("Invalid compression type {}: expected lz4, zlib or none", kind));
    compress = kind != "none";
  }
  bool send_libs = settings.bcast_send_libs;
  if (parsed->Has("send-libs")) {
    std::string value = ToLower(parsed->Last("send-libs").value_or("yes"));
    if (value.empty()) value = "yes";
    if (value != "yes" && value != "no") return Error("--send-libs takes yes or no: " + value);
    send_libs = value == "yes";
  }
  const bool verbose = parsed->Has("verbose"), force = parsed->Has("force"),
             preserve = parsed->Has("preserve");

  // What is sent: the file, then (--send-libs) DEST_libs/ and the libraries in it.
  std::vector<Copy> copies;
  {
    int fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat status {};
    if (fd < 0 || ::fstat(fd, &status) != 0) {
      int error = errno;
      if (fd >= 0) ::close(fd);
      return Error(fmt::format("Can't open `{}`: {}", source, std::strerror(error)));
    }
    if (!S_ISREG(status.st_mode)) {
      ::close(fd);
      return Error(fmt::format("{} is not a regular file", source));
    }
    Copy file;
    file.source = source;
    file.destination = destination;
    file.mode = status.st_mode & 07777;
    file.atime = status.st_atim.tv_sec;
    file.mtime = status.st_mtim.tv_sec;
    file.fd = fd;  // sbcast ends with the process: the kernel closes it
    file.size = static_cast<uint64_t>(status.st_size);
    copies.push_back(std::move(file));
  }
  if (send_libs) {
    BcastRequest request;
    request.program = std::filesystem::absolute(source).string();
    request.destination = destination;
    request.send_libs = true;
    std::string exclude = parsed->Last("exclude").value_or(settings.bcast_exclude);
    if (!EqualsIgnoreCase(exclude, "none"))
      for (const std::string& dir : Split(exclude, ',')) request.exclude.push_back(dir);
    std::map<std::string, std::string> env;
    for (char** entry = environ; *entry; ++entry) {
      std::string_view text(*entry);
      size_t equals = text.find('=');
      if (equals != std::string_view::npos)
        env[std::string(text.substr(0, equals))] = std::string(text.substr(equals + 1));
    }
    auto files = ReadBcastFiles(request, env);
    if (!files) return Error(files.error());
    bool first_library = true;
    for (const v1::StepLaunch::BcastFile& file : *files) {
      if (!file.library()) continue;
      if (first_library) {
        Copy dir;
        dir.destination = destination + "_libs";
        dir.directory = true;
        copies.push_back(std::move(dir));
        first_library = false;
      }
      Copy library;
      library.source = file.path();
      library.destination = destination + "_libs/" + file.path();
      library.data = file.data();
      library.size = library.data.size();
      library.mode = file.mode() & 07777;
      copies.push_back(std::move(library));
    }
  }

  auto connection = Connect(ConnectMode::kLean);
  if (!connection) return Error(connection.error());
  auto running = FindRunningJob(*connection, *job_id);
  if (!running) return Error(running.error());
  if (!running->refusal.empty()) return Error(running->refusal);
  const v1::Job* job = &running->job;
  const std::vector<NodeAgent>& targets = running->agents;
  for (const NodeAgent& node : targets)
    if (node.address.empty()) return Error(fmt::format("node {} has no agent address", node.name));
  if (verbose) {
    std::printf("-----------------------------\n");
    std::printf("block_size = %llu\n", static_cast<unsigned long long>(piece_size));
    std::printf("compress   = %d\n", compress ? 1 : 0);
    std::printf("force      = %s\n", force ? "true" : "false");
    std::printf("fanout     = %d\n", fanout);
    std::printf("jobid      = %llu\n", static_cast<unsigned long long>(*job_id));
    std::printf("preserve   = %s\n", preserve ? "true" : "false");
    std::printf("send_libs  = %s\n", send_libs ? "true" : "false");
    std::printf("timeout    = %d\n", timeout);
    std::printf("verbose    = %d\n", 1);
    std::printf("source     = %s\n", source.c_str());
    std::printf("dest       = %s\n", destination.c_str());
    std::printf("-----------------------------\n");
    std::printf("node_list  = %s\n", job->node_list().c_str());
    std::fflush(stdout);
  }

  // Each node in turn by --fanout threads; a node's pieces go in order.
  std::atomic<size_t> next{0};
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  auto send_to = [&](const NodeAgent& target) -> std::optional<std::string> {
    grpc::ChannelArguments channel_args;
    channel_args.SetMaxSendMessageSize(static_cast<int>(kMostPiece + (1 << 20)));
    auto channel = auth::NewChannel(target.address, connection->cluster, channel_args,
                                    *connection->authenticator);
    if (!channel) return channel.error();
    auto stub = v1::Agent::NewStub(*channel);
    for (const Copy& copy : copies) {
      uint64_t offset = 0;
      do {
        v1::JobFileChunk chunk;
        chunk.set_job_id(*job_id);
        chunk.set_path(copy.destination);
        chunk.set_offset(offset);
        chunk.set_directory(copy.directory);
        uint64_t size = std::min<uint64_t>(piece_size, copy.size - offset);
        if (copy.fd < 0) {
          chunk.set_data(copy.data.data() + offset, size);
        } else {
          std::string& piece = *chunk.mutable_data();
          piece.resize(size);
          for (size_t got = 0; got < size;) {
            ssize_t n =
                ::pread(copy.fd, piece.data() + got, size - got, static_cast<off_t>(offset + got));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
              return fmt::format(
                  "{}: read: {}", copy.source,
                  n == 0 ? "the file shrank while sbcast sent it" : std::strerror(errno));
            got += static_cast<size_t>(n);
          }
        }
        offset += size;
        chunk.set_last(offset >= copy.size);
        chunk.set_replace(force);
        chunk.set_mode(copy.mode);
        if (preserve) {
          chunk.set_preserve(true);
          chunk.set_atime(copy.atime);
          chunk.set_mtime(copy.mtime);
        }
        grpc::ClientContext context;
        context.AddMetadata(kAgentNodeMetadata, target.name);
        if (compress) context.set_compression_algorithm(GRPC_COMPRESS_GZIP);
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::seconds(timeout > 0 ? timeout : 60));
        v1::AgentReply reply;
        grpc::Status sent = stub->WriteJobFile(&context, chunk, &reply);
        if (!sent.ok())
          return fmt::format("{}: {}", copy.directory ? copy.destination : copy.source,
                             sent.error_message());
      } while (offset < copy.size);
    }
    return std::nullopt;
  };
  std::vector<std::thread> workers;
  for (int i = 0; i < std::min<int>(fanout, static_cast<int>(targets.size())); ++i)
    workers.emplace_back([&] {
      for (size_t k; (k = next++) < targets.size();) {
        std::optional<std::string> error = send_to(targets[k]);
        if (verbose && !error)
          std::fprintf(stderr, "sbcast: %s: copied %s\n", targets[k].name.c_str(),
                       destination.c_str());
        if (error) {
          std::lock_guard<std::mutex> lock(errors_mutex);
          errors.push_back(fmt::format("REQUEST_FILE_BCAST({}): {}", targets[k].name, *error));
        }
      }
    });
  for (std::thread& worker : workers) worker.join();
  std::sort(errors.begin(), errors.end());
  for (const std::string& error : errors) Error(error);
  return errors.empty() ? 0 : 1;
}

}  // namespace drover::cli
