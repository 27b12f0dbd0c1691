// See job_listing.h. The Job's wire format is walked by hand: its spec (field 1) is copied
// without the environment (JobSpec field 49), every other field verbatim, and the copy parsed.
#include "cli/job_listing.h"

#include <cstdint>
#include <string>

namespace drover::cli {
namespace {

constexpr uint32_t kJobSpecField = 1;       // Job.spec
constexpr uint32_t kEnvironmentField = 49;  // JobSpec.environment

bool ReadVarint(const char*& p, const char* end, uint64_t& value) {
  value = 0;
  for (int shift = 0; p < end && shift < 64; shift += 7) {
    const auto byte = static_cast<uint8_t>(*p++);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

void AppendVarint(uint64_t value, std::string& out) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

// Appends `message`'s fields to `out` without those numbered `drop`; the payload of field
// `descend` (length-delimited) is filtered the same way without its fields numbered
// `inner_drop`. False for malformed bytes.
bool CopyWithout(std::string_view message, uint32_t drop, uint32_t descend, uint32_t inner_drop,
                 std::string& out) {
  const char* p = message.data();
  const char* const end = p + message.size();
  while (p < end) {
    const char* const field_start = p;
    uint64_t tag = 0, length = 0, ignored = 0;
    if (!ReadVarint(p, end, tag)) return false;
    const char* const after_tag = p;
    const auto field = static_cast<uint32_t>(tag >> 3);
    const char* payload = p;
    switch (tag & 7) {
      case 0:
        if (!ReadVarint(p, end, ignored)) return false;
        break;
      case 1:
        if (end - p < 8) return false;
        p += 8;
        break;
      case 5:
        if (end - p < 4) return false;
        p += 4;
        break;
      case 2:
        if (!ReadVarint(p, end, length) || static_cast<uint64_t>(end - p) < length) return false;
        payload = p;
        p += length;
        break;
      default:
        return false;  // groups: not in drover.proto
    }
    if (field == drop) continue;
    if (field == descend && (tag & 7) == 2) {
      std::string inner;
      if (!CopyWithout(std::string_view(payload, length), inner_drop, 0, 0, inner)) return false;
      out.append(field_start, after_tag);
      AppendVarint(inner.size(), out);
      out += inner;
      continue;
    }
    out.append(field_start, p);
  }
  return true;
}

}  // namespace

bool ParseJobWithoutEnvironment(std::string_view bytes, v1::Job* job) {
  std::string copy;
  copy.reserve(bytes.size());
  if (!CopyWithout(bytes, 0, kJobSpecField, kEnvironmentField, copy))
    return job->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  return job->ParseFromString(copy);
}

std::vector<v1::Job> ParseJobsWithoutEnvironment(const v1::JobList& list) {
  std::vector<v1::Job> jobs(list.jobs_size());
  for (int i = 0; i < list.jobs_size(); ++i) ParseJobWithoutEnvironment(list.jobs(i), &jobs[i]);
  return jobs;
}

}  // namespace drover::cli
