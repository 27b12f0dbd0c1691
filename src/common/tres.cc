// Trackable resources: parsing and printing Slurm's "cpu=8,mem=4000M,gres/gpu=2" strings
// (CfgTRES, AllocTRES, --tres-per-*) and the weights of TRESBillingWeights.
#include "common/tres.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>
#include <limits>
#include <optional>

#include "common/memory_size.h"
#include "common/text.h"

namespace drover {
namespace {

// The built-in TRES, in the order Slurm prints them.
constexpr std::string_view kBuiltinNames[] = {"cpu",     "mem",     "energy", "node",
                                              "billing", "fs/disk", "vmem",   "pages"};
// Families whose members are named after the slash: "gres/gpu:h100", "license/matlab".
constexpr std::string_view kFamilies[] = {"gres", "license", "fs", "ic", "bb"};
// GRES often written without their "gres/" ("gpu=8"). They are tried before the built-ins so
// that "gpu" is taken for "gres/gpu" rather than a misspelt "cpu".
constexpr std::string_view kCommonGres[] = {"gpu", "mps", "shard", "nic"};

bool IsFamily(std::string_view word) {
  return std::any_of(std::begin(kFamilies), std::end(kFamilies),
                     [word](std::string_view family) { return EqualsIgnoreCase(word, family); });
}

// Member names ("gpu:h100", "matlab@server") may hold any printable character but a space, so
// that what FormatTres prints reads back unchanged.
bool IsMember(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isgraph(static_cast<unsigned char>(c));
  });
}

bool IsIdentifier(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::optional<std::string> SuggestFamilyMember(std::string_view name, size_t slash) {
  std::optional<std::string> family = ClosestMatch(name.substr(0, slash), kFamilies);
  if (!family || !IsMember(name.substr(slash + 1))) return std::nullopt;
  return *family + std::string(name.substr(slash));
}

// What the user most likely meant by an unknown name: a misspelt family ("gers/gpu"), a GRES
// without its prefix ("gpu", "gpus", "fpga"), a misspelt or extended built-in ("cpus", "memory").
std::optional<std::string> SuggestName(std::string_view name) {
  size_t slash = name.find('/');
  if (slash != std::string_view::npos) return SuggestFamilyMember(name, slash);
  if (!IsIdentifier(name) || IsFamily(name)) return std::nullopt;
  if (std::optional<std::string> gres = ClosestMatch(name, kCommonGres)) return "gres/" + *gres;
  if (std::optional<std::string> builtin = ClosestMatch(name, kBuiltinNames)) return builtin;
  for (std::string_view builtin : kBuiltinNames) {
    if (StartsWithIgnoreCase(name, builtin)) return std::string(builtin);
  }
  return "gres/" + std::string(name);
}

Error UnknownTres(std::string_view name, std::string_view item) {
  std::string message = fmt::format("unknown TRES '{}' in '{}'", name, item);
  if (std::optional<std::string> guess = SuggestName(name)) {
    message += fmt::format(" (did you mean '{}'?)", *guess);
  }
  return MakeError(std::move(message));
}

// Built-ins are matched whole and case-insensitively; a family member keeps the case of its
// member name (GRES types and license names are case-sensitive in Slurm).
Result<std::string> CanonicalName(std::string_view name, std::string_view item) {
  for (std::string_view builtin : kBuiltinNames) {
    if (EqualsIgnoreCase(name, builtin)) return std::string(builtin);
  }
  size_t slash = name.find('/');
  if (slash != std::string_view::npos && IsMember(name.substr(slash + 1))) {
    std::string family = ToLower(name.substr(0, slash));
    if (std::find(std::begin(kFamilies), std::end(kFamilies), family) != std::end(kFamilies)) {
      return family + std::string(name.substr(slash));
    }
  }
  return UnknownTres(name, item);
}

struct Entry {
  std::string name;  // canonical
  std::string value;
};

// Splits a "name=value,..." list into canonical names and their values, rejecting empty entries
// and names given twice (Slurm would silently keep one of them). `expected` shows the form.
Result<std::vector<Entry>> SplitEntries(std::string_view text, std::string_view expected) {
  std::vector<Entry> entries;
  if (Trim(text).empty()) return entries;
  for (const std::string& part : Split(Trim(text), ',')) {
    std::string_view item = Trim(part);
    if (item.empty()) {
      return MakeError(fmt::format("empty TRES entry in '{}' (expected {})", text, expected));
    }
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return MakeError(fmt::format("invalid TRES '{}' (expected {})", item, expected));
    }
    Result<std::string> name = CanonicalName(item.substr(0, eq), item);
    if (!name) return std::move(name).take_error();
    for (const Entry& seen : entries) {
      if (seen.name == *name) {
        return MakeError(fmt::format("duplicate TRES '{}' in '{}'", *name, text));
      }
    }
    entries.push_back({std::move(name).value(), std::string(item.substr(eq + 1))});
  }
  return entries;
}

Result<uint64_t> ParseCount(const std::string& name, std::string_view value) {
  if (name == "mem") {
    if (Result<uint64_t> megabytes = ParseMemoryMB(value)) return megabytes;
    return MakeError(
        fmt::format("invalid count '{}' for TRES 'mem' (expected a memory size, e.g. 16G)", value));
  }
  if (std::optional<uint64_t> count = ParseUint64(value)) return *count;
  return MakeError(fmt::format("invalid count '{}' for TRES '{}'", value, name));
}

// Megabytes per unit of a memory weight's suffix; a weight per GB is 1/1024 of that per MB.
std::optional<double> MegabytesPerUnit(char suffix) {
  switch (suffix) {
    case 'K':
    case 'k':
      return 1.0 / 1024;
    case 'M':
    case 'm':
      return 1.0;
    case 'G':
    case 'g':
      return 1024.0;
    case 'T':
    case 't':
      return 1024.0 * 1024;
    default:
      return std::nullopt;
  }
}

// A plain non-negative decimal ("2", "0.25", ".5"): no sign, exponent, inf or nan.
std::optional<double> ParseDecimal(std::string_view text) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.')) {
    return std::nullopt;
  }
  double value = 0;
  auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Result<double> ParseWeight(const std::string& name, std::string_view value) {
  double megabytes_per_unit = 1.0;
  std::string_view number = value;
  if (name == "mem" && !value.empty()) {
    if (std::optional<double> unit = MegabytesPerUnit(value.back())) {
      megabytes_per_unit = *unit;
      number.remove_suffix(1);
    }
  }
  if (std::optional<double> weight = ParseDecimal(number)) return *weight / megabytes_per_unit;
  return MakeError(fmt::format(
      "invalid weight '{}' for TRES '{}' (expected a non-negative number{}, e.g. {})", value, name,
      name == "mem" ? " with an optional K, M, G or T" : "", name == "mem" ? "0.25G" : "1.0"));
}

// Slurm's print order: built-ins in their fixed order, then the rest by name with a typed GRES
// right after its untyped one ("gres/gpu", "gres/gpu:h100", "gres/gpu_x").
struct PrintOrder {
  static std::pair<size_t, std::pair<std::string_view, std::string_view>> Key(
      std::string_view name) {
    auto builtin = std::find(std::begin(kBuiltinNames), std::end(kBuiltinNames), name);
    size_t colon = std::min(name.find(':'), name.size());
    return {static_cast<size_t>(builtin - std::begin(kBuiltinNames)),
            {name.substr(0, colon), name.substr(colon)}};
  }
  bool operator()(const std::pair<std::string, uint64_t>* a,
                  const std::pair<std::string, uint64_t>* b) const {
    return Key(a->first) < Key(b->first);
  }
};

}  // namespace

void TresList::Set(std::string_view name, uint64_t count) {
  for (auto& [key, value] : items_) {
    if (key == name) {
      value = count;
      return;
    }
  }
  items_.emplace_back(std::string(name), count);
}

void TresList::Add(std::string_view name, uint64_t count) {
  for (auto& [key, value] : items_) {
    if (key == name) {
      // Saturate: a sum of allocations past 2^64 is a bug elsewhere, not a reason to wrap to 0.
      value = count > std::numeric_limits<uint64_t>::max() - value
                  ? std::numeric_limits<uint64_t>::max()
                  : value + count;
      return;
    }
  }
  items_.emplace_back(std::string(name), count);
}

uint64_t TresList::Get(std::string_view name) const {
  for (const auto& [key, value] : items_) {
    if (key == name) return value;
  }
  return 0;
}

bool TresList::Has(std::string_view name) const {
  return std::any_of(items_.begin(), items_.end(),
                     [name](const auto& item) { return item.first == name; });
}

Result<TresList> ParseTres(std::string_view text) {
  Result<std::vector<Entry>> entries = SplitEntries(text, "name=count, e.g. cpu=8");
  if (!entries) return std::move(entries).take_error();
  TresList tres;
  for (const Entry& entry : *entries) {
    Result<uint64_t> count = ParseCount(entry.name, entry.value);
    if (!count) return std::move(count).take_error();
    tres.Set(entry.name, *count);
  }
  return tres;
}

std::string FormatTres(const TresList& tres) {
  std::vector<const std::pair<std::string, uint64_t>*> sorted;
  for (const auto& item : tres.items()) sorted.push_back(&item);
  std::sort(sorted.begin(), sorted.end(), PrintOrder());
  std::vector<std::string> parts;
  for (const auto* item : sorted) {
    const std::string count =
        item->first == "mem" ? FormatMemoryMB(item->second) : std::to_string(item->second);
    parts.push_back(item->first + "=" + count);
  }
  return Join(parts, ",");
}

Result<std::vector<std::pair<std::string, double>>> ParseTresWeights(std::string_view text) {
  Result<std::vector<Entry>> entries = SplitEntries(text, "name=weight, e.g. cpu=1.0");
  if (!entries) return std::move(entries).take_error();
  std::vector<std::pair<std::string, double>> weights;
  for (const Entry& entry : *entries) {
    Result<double> weight = ParseWeight(entry.name, entry.value);
    if (!weight) return std::move(weight).take_error();
    weights.emplace_back(entry.name, *weight);
  }
  return weights;
}

}  // namespace drover
