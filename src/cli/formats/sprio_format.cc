// sprio's table from the controller's priority factors (see priority_formats.h): Slurm 22.05's
// -o fields, its default and -l formats (a factor weighted 0 has no default column), -n's
// normalized factors and -w's weights line.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/formats/formats.h"
#include "cli/formats/priority_formats.h"
#include "common/text.h"

namespace drover::cli {
namespace {

using columns::Pad;

constexpr std::string_view kLongFormat =
    "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T";
constexpr std::string_view kLongNormalizedFormat =
    "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t";
constexpr std::string_view kLetters = "aAbBcfFijJnNopPqQrStTuyY";

// The factor behind a letter pair (%a/%A ...): its name in PriorityList.weights and its value.
struct Factor {
  char normalized, weighted;
  std::string_view name, header;
  double (*value)(const v1::JobPriority&);
};

constexpr Factor kFactors[] = {
    {'a', 'A', "age", "AGE", [](const v1::JobPriority& j) { return j.age(); }},
    {'b', 'B', "assoc", "ASSOC", [](const v1::JobPriority& j) { return j.assoc(); }},
    {'f', 'F', "fairshare", "FAIRSHARE", [](const v1::JobPriority& j) { return j.fairshare(); }},
    {'j', 'J', "jobsize", "JOBSIZE", [](const v1::JobPriority& j) { return j.job_size(); }},
    {'p', 'P', "partition", "PARTITION",
     [](const v1::JobPriority& j) { return j.partition_factor(); }},
    {'q', 'Q', "qos", "QOS", [](const v1::JobPriority& j) { return j.qos(); }},
};

const Factor* FindFactor(char letter) {
  for (const Factor& factor : kFactors)
    if (factor.normalized == letter || factor.weighted == letter) return &factor;
  return nullptr;
}

uint32_t Weight(const SprioOptions& options, std::string_view name) {
  auto it = options.factor_weights.find(std::string(name));
  return it == options.factor_weights.end() ? 0 : it->second;
}

std::string DefaultFormat(const SprioOptions& options) {
  if (options.long_format)
    return std::string(options.normalized ? kLongNormalizedFormat : kLongFormat);
  std::string format = "%.15i %9r";
  if (options.show_user) format += " %.8u";
  format += options.normalized ? " %10y" : " %.10Y %.10S";
  for (const Factor& factor : kFactors)
    if (Weight(options, factor.name))
      format += options.normalized ? std::string(" %10") + factor.normalized
                                   : std::string(" %.10") + factor.weighted;
  if (!options.tres_weights.empty()) format += options.normalized ? " %20t" : " %.20T";
  return format;
}

std::string Integer(double value) {
  return fmt::format("{:.0f}", value);
}

std::string Normalized(double value) {
  return fmt::format("{:.7f}", value);
}

double TresWeight(const SprioOptions& options, const std::string& name) {
  for (const auto& [tres, weight] : options.tres_weights)
    if (tres == name) return weight;
  return 0;
}

// "cpu=500,gres/gpu=250": the job's nonzero TRES factors, weighted or as fractions (%.2f).
std::string TresText(const v1::JobPriority& job, const SprioOptions& options, bool weighted) {
  std::map<std::string, double> sorted(job.tres().begin(), job.tres().end());
  std::string out;
  for (const auto& [name, factor] : sorted) {
    if (factor == 0) continue;
    if (!out.empty()) out += ',';
    out += weighted ? fmt::format("{}={:.0f}", name, factor * TresWeight(options, name))
                    : fmt::format("{}={:.2f}", name, factor);
  }
  return out;
}

std::string TresWeightsText(const SprioOptions& options) {
  std::string out;
  for (const auto& [name, weight] : options.tres_weights)
    out += fmt::format("{}{}={}", out.empty() ? "" : ",", name, weight);
  return out;
}

std::string HeaderText(char letter) {
  if (const Factor* factor = FindFactor(letter)) return std::string(factor->header);
  switch (letter) {
    case 'c':
      return "CLUSTER";
    case 'i':
      return "JOBID";
    case 'n':
      return "QOSNAME";
    case 'N':
      return "NICE";
    case 'o':
      return "ACCOUNT";
    case 'r':
      return "PARTITION";
    case 'S':
      return "SITE";
    case 't':
    case 'T':
      return "TRES";
    case 'u':
      return "USER";
    case 'y':
    case 'Y':
      return "PRIORITY";
  }
  return "";
}

std::string WeightText(char letter, const SprioOptions& options) {
  if (const Factor* factor = FindFactor(letter)) return Integer(Weight(options, factor->name));
  switch (letter) {
    case 'c':
      return options.cluster_name;
    case 'i':
      return "Weights";
    case 'S':
      return "1";
    case 'T':
      return TresWeightsText(options);
  }
  return "";
}

std::string JobText(char letter, const v1::JobPriority& job, const SprioOptions& options) {
  if (const Factor* factor = FindFactor(letter)) {
    uint32_t weight = Weight(options, factor->name);
    double value = factor->value(job);
    if (letter == factor->weighted) return Integer(value * weight);
    return Normalized(weight ? value : 0);
  }
  switch (letter) {
    case 'c':
      return options.cluster_name;
    case 'i':
      return std::to_string(job.job_id());
    case 'n': {
      auto it = options.job_qos.find(job.job_id());
      return it == options.job_qos.end() ? "normal" : it->second;
    }
    case 'N':
      return std::to_string(job.nice());
    case 'o':
      return job.account();
    case 'r':
      return job.partition();
    case 'S':
      return "0";
    case 't':
      return TresText(job, options, false);
    case 'T':
      return TresText(job, options, true);
    case 'u':
      return job.user();
    case 'y':
      return fmt::format("{:16.14f}", static_cast<double>(job.priority()) / 4294967295.0);
    case 'Y':
      return std::to_string(job.priority());
  }
  return "";
}

bool Known(char letter) {
  return letter != 0 && kLetters.find(letter) != std::string_view::npos;
}

// One line: the prefix, then each known field padded (cut to its width) and its suffix.
template <typename TextOf>
std::string Line(const columns::PercentFormat& format, TextOf text_of) {
  std::string line = format.prefix;
  for (const columns::FieldSpec& field : format.fields) {
    if (!Known(field.letter)) continue;
    line += Pad(text_of(field.letter), field.width, field.right);
    line += field.suffix;
  }
  return line + "\n";
}

nlohmann::json FactorsJson(const v1::JobPriority& job, const SprioOptions& options) {
  nlohmann::json factors = nlohmann::json::object();
  for (const Factor& factor : kFactors) {
    uint32_t weight = Weight(options, factor.name);
    double value = factor.value(job);
    factors[std::string(factor.name)] = {{"normalized", value}, {"weighted", value * weight}};
  }
  return factors;
}

}  // namespace

namespace {

// -S: "u,r,-y", each key a field letter compared as a number where both values are one; the
// last key sorts first, stably, so the first key decides.
void SortBy(std::vector<const v1::JobPriority*>& jobs, const SprioOptions& options) {
  std::vector<std::string> keys = Split(options.sort, ',');
  for (auto key = keys.rbegin(); key != keys.rend(); ++key) {
    std::string_view text = Trim(*key);
    bool reverse = text.starts_with('-');
    if (reverse || text.starts_with('+')) text.remove_prefix(1);
    if (text.empty()) continue;
    char letter = text.front();
    std::stable_sort(jobs.begin(), jobs.end(), [&](const auto* a, const auto* b) {
      std::string x(Trim(JobText(letter, *a, options))), y(Trim(JobText(letter, *b, options)));
      char* end_x = nullptr;
      char* end_y = nullptr;
      double nx = std::strtod(x.c_str(), &end_x), ny = std::strtod(y.c_str(), &end_y);
      int diff = !x.empty() && !y.empty() && *end_x == 0 && *end_y == 0 ? (nx < ny   ? -1
                                                                           : nx > ny ? 1
                                                                                     : 0)
                                                                        : x.compare(y);
      return reverse ? diff > 0 : diff < 0;
    });
  }
}

}  // namespace

std::string FormatSprio(std::span<const v1::JobPriority> jobs, const SprioOptions& options) {
  if (options.jobs_given && jobs.empty() && !options.weights)
    return "Unable to find jobs matching user/id(s) specified\n";
  columns::PercentFormat format =
      columns::ParsePercentFormat(options.format.empty() ? DefaultFormat(options) : options.format);
  std::string out;
  if (!options.no_header) out += Line(format, HeaderText);
  if (options.weights)
    return out + Line(format, [&](char letter) { return WeightText(letter, options); });
  std::vector<const v1::JobPriority*> sorted;
  for (const v1::JobPriority& job : jobs) sorted.push_back(&job);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return a->job_id() < b->job_id(); });
  SortBy(sorted, options);
  for (const v1::JobPriority* job : sorted)
    out += Line(format, [&](char letter) { return JobText(letter, *job, options); });
  return out;
}

std::vector<std::string> SprioFormatErrors(std::string_view format) {
  std::vector<std::string> errors;
  for (const columns::FieldSpec& field : columns::ParsePercentFormat(format).fields)
    if (!Known(field.letter))
      errors.push_back(fmt::format("Invalid job format specification: {}",
                                   field.letter ? std::string(1, field.letter) : ""));
  return errors;
}

std::string SprioJson(std::span<const v1::JobPriority> jobs, const SprioOptions& options) {
  nlohmann::json out;
  out["jobs"] = nlohmann::json::array();
  std::vector<const v1::JobPriority*> sorted;
  for (const v1::JobPriority& job : jobs) sorted.push_back(&job);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return a->job_id() < b->job_id(); });
  for (const v1::JobPriority* job : sorted) {
    nlohmann::json tres = nlohmann::json::object();
    for (const auto& [name, factor] : job->tres()) tres[name] = factor;
    out["jobs"].push_back({{"job_id", job->job_id()},
                           {"partition", job->partition()},
                           {"user", job->user()},
                           {"account", job->account()},
                           {"priority", job->priority()},
                           {"nice", job->nice()},
                           {"factors", FactorsJson(*job, options)},
                           {"tres", tres}});
  }
  nlohmann::json weights = nlohmann::json::object();
  for (const Factor& factor : kFactors)
    weights[std::string(factor.name)] = Weight(options, factor.name);
  nlohmann::json tres_weights = nlohmann::json::object();
  for (const auto& [name, weight] : options.tres_weights) tres_weights[name] = weight;
  weights["tres"] = tres_weights;
  out["weights"] = weights;
  return out.dump(2) + "\n";
}

}  // namespace drover::cli
