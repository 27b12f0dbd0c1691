// The bounds on what one submission may carry: string lengths, list sizes, the script's size,
// times and counts that must neither be negative nor overflow. Checked at the edge (the
// controller's Submit handlers) so nothing oversized reaches the engine; the wire codec stays a
// plain conversion because stored records are read through it too. Never allocates in
// proportion to the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/cluster_config.h"
#include "common/job_spec.h"
#include "common/result.h"

namespace drover {

// Slurm's own limits where it has them (job_mgr.c: 1024 for names, PATH_MAX for paths, 64 KiB
// for node lists); Drover's where it has none (environment, arguments), documented in
// docs/controller.md.
inline constexpr size_t kMaxNameLength = 1024;       // name, account, QOS, comment, ...
inline constexpr size_t kMaxPathLength = 4096;       // --chdir, --output, --error, --input
inline constexpr size_t kMaxNodeListLength = 65536;  // --nodelist, --exclude (all names)
inline constexpr size_t kMaxListEntries = 65536;     // environment entries, script arguments
inline constexpr size_t kMaxListBytes = 1 << 20;     // environment, script arguments (each)
inline constexpr size_t kMaxDependencies = 1000;     // --dependency terms
inline constexpr size_t kMaxGres = 64;               // --gres entries
inline constexpr int64_t kMaxTimeLimitSeconds = 4294967294LL * 60;  // Slurm: minutes in uint32
inline constexpr int64_t kMaxTimestamp = 253402300799;              // 9999-12-31T23:59:59Z
inline constexpr int64_t kMaxSignalSeconds = 65535;  // Slurm keeps --signal's time in 16 bits
inline constexpr int32_t kMaxNice = 2147483645;      // Slurm: NICE_OFFSET - 3

// OK, or an error that names the field, its size and the limit: "--comment is 5000 bytes; the
// limit is 1024", "the batch script is 5242880 bytes; the limit is max_script_size=4194304
// (SchedulerParameters)", "--ntasks=4000000 with --cpus-per-task=4000 asks for more than
// 4294967295 CPUs".
Status CheckSubmission(const JobSpec& spec, std::string_view script,
                       const ClusterSettings& settings);

// One text field against its limit; `field` is how the user wrote it ("--job-name").
Status CheckLength(std::string_view field, std::string_view value, size_t limit);

// A time limit in seconds: positive and at most kMaxTimeLimitSeconds, or kUnlimitedSeconds.
Status CheckTimeLimit(std::string_view field, int64_t seconds);

}  // namespace drover
