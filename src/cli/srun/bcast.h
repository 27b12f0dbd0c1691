// srun --bcast (srun(1)): the step's program — with --send-libs also the shared libraries it
// loads from outside BcastExclude's directories — read on srun's host and sent with the launch,
// so each node writes a copy and its tasks run that copy. A launch is one message, so what is
// sent is bounded (kMostBcastBytes, common/step_launch.h), with a clear error above it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/getopt.h"
#include "common/launch_settings.h"
#include "common/result.h"
#include "common/step_launch.h"
#include "proto/drover.pb.h"

namespace drover::cli {

struct BcastRequest {
  std::string program;      // absolute: the file srun's PATH finds for the command
  std::string destination;  // absolute; ending in '/': a directory, the node names the file
  bool send_libs = false;
  std::vector<std::string> exclude;  // directories whose libraries stay on the nodes
};

// What --bcast, --send-libs and --bcast-exclude ask for (slurm.conf's BcastParameters and
// BcastExclude when not given); nullopt without --bcast. `work_dir` is the step's (--chdir).
Result<std::optional<BcastRequest>> BcastRequestOf(const ParsedOptions& parsed,
                                                   const LaunchSettings& settings,
                                                   const std::string& command,
                                                   const std::string& work_dir,
                                                   const std::map<std::string, std::string>& env);

// The files to send: the program first, then its libraries (found as the dynamic loader finds
// them: DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, then the system's directories).
Result<std::vector<v1::StepLaunch::BcastFile>> ReadBcastFiles(
    const BcastRequest& request, const std::map<std::string, std::string>& env);

// --compress[=lz4|none] (BcastParameters Compression= when bare): whether the launch is sent
// compressed. An unknown type is Slurm's warning, and no compression.
bool CompressLaunch(const ParsedOptions& parsed, const LaunchSettings& settings);

}  // namespace drover::cli
