// The values sbatch's options take, read as Slurm reads them: counts, time limits, node ranges,
// GPU counts, host lists and files, signals, mail types. Each returns sbatch's own error words;
// none knows which option or source it serves beyond the name it is given for messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/sbatch/sbatch_settings.h"
#include "common/result.h"

namespace drover::cli::sbatch {

// Slurm's parse_int for a count: a whole decimal number above zero.
Result<uint32_t> ParseCount(const std::string& text, std::string_view option);
// Slurm's time_str2mins: whole minutes, rounded up; 0, -1, INFINITE and UNLIMITED mean no limit.
std::optional<int64_t> ParseTimeLimit(std::string_view text);
// "none" is /dev/null for --output, --error and --input.
std::string IoPath(const std::string& text);
std::string Absolute(const std::string& path, const std::string& cwd);
// "[type:]count", as --gpus, --gpus-per-node and --gpus-per-task take it.
Result<GpuCount> ParseGpuCount(const std::string& text, std::string_view option);
// The words of a host file: separated by blanks, commas or newlines, '#' starting a comment.
std::vector<std::string> HostFileWords(std::string_view content);
// Host names from a hostlist expression, or from a file when the text holds a '/' (as Slurm
// reads --nodelist) or `from_file`; duplicates dropped, order kept.
Result<std::vector<std::string>> ParseHostNames(const std::string& text, std::string_view option,
                                                const Inputs& in, bool from_file);
// Slurm's verify_node_count: "N" or "MIN-MAX" (an empty MAX is no maximum), with k and m
// multiplying by 1024 and 1048576.
std::optional<uint64_t> ParseNodeCount(std::string_view text);
Result<NodeRange> ParseNodeRange(const std::string& text);
// Slurm's sig_name2num: a number, or a name with or without "SIG", in any case.
std::optional<int> ParseSignal(std::string_view text);
// --signal=[{R|B}:]SIG[@seconds], seconds 0..65535, 60 when not given; `reservation` says
// whether R: (signal at the reservation's end) was asked for.
std::optional<SignalRequest> ParseSignalOption(std::string_view text, bool& reservation);

// --uid and --gid: a name or a number, from the system's user and group databases.
struct UserEntry {
  uint32_t uid = 0, gid = 0;
  std::string name;
};
std::optional<UserEntry> LookUpUser(std::string_view name_or_id);
std::optional<uint32_t> LookUpGroup(std::string_view name_or_id);

}  // namespace drover::cli::sbatch
