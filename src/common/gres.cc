// Generic resources as written in node definitions and requests ("gpu:h100:8(S:0-1),nic:1"):
// parsing into GresSpec and printing back in Slurm's form.
#include "common/gres.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>

#include "common/text.h"

namespace drover {
namespace {

// Slurm keeps socket indexes in 16 bits; the bound also stops "(S:0-4000000000)" from
// expanding into billions of entries.
constexpr uint64_t kMaxSocket = 65535;

Error InvalidGres(std::string_view item) {
  return MakeError(
      fmt::format("invalid GRES '{}' (expected name[:type][:count], e.g. gpu:h100:8)", item));
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

bool IsName(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Types are model names such as "h100", "a100_80g", "tesla-v100" or "rtx.6000"; the first
// character must be a letter or digit so that "gpu:-1" is not read as a type "-1".
bool IsType(std::string_view text) {
  return !text.empty() && std::isalnum(static_cast<unsigned char>(text[0])) &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
         });
}

// Digits with an optional K, M or G: the shape that makes a field a count rather than a type.
bool IsCount(std::string_view text) {
  if (!text.empty() && std::string_view("KMGkmg").find(text.back()) != std::string_view::npos) {
    text.remove_suffix(1);
  }
  return !text.empty() && std::all_of(text.begin(), text.end(), IsDigit);
}

// The value of a field that IsCount accepted; nullopt when it does not fit in 64 bits.
std::optional<uint64_t> CountValue(std::string_view text) {
  const char suffix = static_cast<char>(std::tolower(static_cast<unsigned char>(text.back())));
  const size_t unit = std::string_view("kmg").find(suffix);
  if (unit != std::string_view::npos) text.remove_suffix(1);
  std::optional<uint64_t> value = ParseUint64(text);
  for (size_t i = 0; value && unit != std::string_view::npos && i <= unit; ++i) {
    if (*value > std::numeric_limits<uint64_t>::max() / 1024) return std::nullopt;
    *value *= 1024;
  }
  return value;
}

// One "N" or "N-M" of a socket list, appended to `sockets`.
bool AddSocketRange(std::string_view range, std::vector<int>& sockets) {
  size_t dash = range.find('-');
  std::optional<uint64_t> first = ParseUint64(range.substr(0, dash));
  std::optional<uint64_t> last =
      dash == std::string_view::npos ? first : ParseUint64(range.substr(dash + 1));
  if (!first || !last || *first > *last || *last > kMaxSocket) return false;
  for (uint64_t socket = *first; socket <= *last; ++socket) {
    sockets.push_back(static_cast<int>(socket));
  }
  return true;
}

// "(S:0-1)" or "(S:0,2)": kept sorted and without repeats, as Slurm holds them in a bitmap.
Result<std::vector<int>> ParseSockets(std::string_view text, std::string_view item) {
  std::vector<int> sockets;
  bool ok = text.size() > 4 && text.substr(0, 3) == "(S:" && text.back() == ')';
  for (const std::string& range : Split(ok ? text.substr(3, text.size() - 4) : "", ',')) {
    ok = ok && AddSocketRange(range, sockets);
  }
  if (!ok) {
    return MakeError(fmt::format(
        "invalid sockets '{}' in GRES '{}' (expected socket numbers or ranges, e.g. (S:0-1) or "
        "(S:0,2))",
        text, item));
  }
  std::sort(sockets.begin(), sockets.end());
  sockets.erase(std::unique(sockets.begin(), sockets.end()), sockets.end());
  return sockets;
}

// name[:type][:count], without the sockets.
Result<GresSpec> ParseFields(std::string_view head, std::string_view item) {
  GresSpec spec;
  std::vector<std::string> fields = Split(head, ':');
  if (fields.size() > 3 || !IsName(fields[0])) return InvalidGres(item);
  spec.name = fields[0];
  // With two fields the second is a count if it looks like one ("gpu:8"), else a type.
  const bool has_type = fields.size() == 3 || (fields.size() == 2 && !IsCount(fields[1]));
  if (has_type && !IsType(fields[1])) return InvalidGres(item);
  if (has_type) spec.type = fields[1];
  if (fields.size() == 1 || (fields.size() == 2 && has_type)) return spec;
  if (!IsCount(fields.back())) return InvalidGres(item);
  std::optional<uint64_t> count = CountValue(fields.back());
  if (!count) return MakeError(fmt::format("invalid GRES '{}' (count too large)", item));
  spec.count = *count;
  return spec;
}

Result<GresSpec> ParseOne(std::string_view item) {
  size_t paren = item.find('(');
  Result<GresSpec> spec = ParseFields(item.substr(0, paren), item);
  if (!spec || paren == std::string_view::npos) return spec;
  Result<std::vector<int>> sockets = ParseSockets(item.substr(paren), item);
  if (!sockets) return std::move(sockets).take_error();
  spec->sockets = std::move(sockets).value();
  return spec;
}

// "0,1,2,5" -> "0-2,5".
std::string FormatSockets(std::vector<int> sockets) {
  std::sort(sockets.begin(), sockets.end());
  sockets.erase(std::unique(sockets.begin(), sockets.end()), sockets.end());
  std::vector<std::string> ranges;
  for (size_t i = 0; i < sockets.size();) {
    size_t j = i;
    while (j + 1 < sockets.size() && sockets[j + 1] == sockets[j] + 1) ++j;
    ranges.push_back(i == j ? std::to_string(sockets[i])
                            : fmt::format("{}-{}", sockets[i], sockets[j]));
    i = j + 1;
  }
  return Join(ranges, ",");
}

}  // namespace

Result<std::vector<GresSpec>> ParseGres(std::string_view text) {
  std::vector<GresSpec> gres;
  std::string_view trimmed = Trim(text);
  // Slurm prints a node without GRES as "Gres=(null)".
  if (trimmed.empty() || trimmed == "(null)") return gres;
  for (const std::string& part : SplitTopLevel(trimmed, ',')) {
    std::string_view item = Trim(part);
    if (item.empty()) {
      return MakeError(fmt::format(
          "empty GRES entry in '{}' (expected name[:type][:count], e.g. gpu:h100:8)", text));
    }
    Result<GresSpec> spec = ParseOne(item);
    if (!spec) return std::move(spec).take_error();
    gres.push_back(std::move(spec).value());
  }
  return gres;
}

std::string FormatGres(const GresSpec& gres) {
  std::string out = gres.name;
  if (!gres.type.empty()) out += ":" + gres.type;
  out += fmt::format(":{}", gres.count);
  if (!gres.sockets.empty()) out += fmt::format("(S:{})", FormatSockets(gres.sockets));
  return out;
}

// An empty list prints as "", not Slurm's "(null)": callers that show it to users choose.
std::string FormatGres(const std::vector<GresSpec>& gres) {
  std::vector<std::string> parts;
  for (const GresSpec& spec : gres) parts.push_back(FormatGres(spec));
  return Join(parts, ",");
}

}  // namespace drover
