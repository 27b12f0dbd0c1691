// The job's environment; see sbatch_job_environment.h.
#include "cli/sbatch/sbatch_job_environment.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "cli/sbatch/sbatch_values.h"
#include "common/text.h"

namespace drover::cli::sbatch {
namespace {

// NAME=value entries with each name once, in the order names first appear; a later value
// replaces an earlier one, as Slurm's env_array_merge does.
class JobEnvironment {
 public:
  void Set(const std::string& name, const std::string& value) {
    auto [it, inserted] = index_.try_emplace(name, entries_.size());
    if (inserted)
      entries_.emplace_back(name, value);
    else
      entries_[it->second].second = value;
  }
  void SetEntry(std::string_view entry) {
    size_t equals = entry.find('=');
    if (equals == 0 || equals == std::string_view::npos) return;
    Set(std::string(entry.substr(0, equals)), std::string(entry.substr(equals + 1)));
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> lines;
    for (const auto& [name, value] : entries_) lines.push_back(name + "=" + value);
    return lines;
  }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
  std::unordered_map<std::string, size_t> index_;
};

// --export's list: split on commas outside quotes; a word wholly in quotes loses them.
Result<std::vector<std::string>> ExportWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == ',') {
      if (word.size() >= 2 && (word.front() == '"' || word.front() == '\'') &&
          word.back() == word.front())
        word = word.substr(1, word.size() - 2);
      if (!word.empty()) words.push_back(word);
      word.clear();
      continue;
    }
    if (i < text.size()) word += c;
  }
  if (quote) return Fail(fmt::format("Improperly formed environment variable ({})", text));
  return words;
}

}  // namespace

// The job's environment: --export-file's entries, then the caller's variables as --export
// chooses (ALL by default; NONE and a list keep only SLURM_* besides what they name).
Result<std::vector<std::string>> BuildEnvironment(const Settings& s, const Inputs& in) {
  std::map<std::string, std::string> caller = in.environment;
  caller["SLURM_SUBMIT_DIR"] = in.cwd;  // sbatch sets these in its own environment first
  if (s.export_env && !EqualsIgnoreCase(*s.export_env, "ALL"))
    caller.try_emplace("SLURM_EXPORT_ENV", *s.export_env);
  if (s.open_mode) caller["SLURM_OPEN_MODE"] = std::string(1, *s.open_mode);
  for (const auto& [name, value] : s.variables) caller[name] = value;  // -m, --cpu-freq, ...
  JobEnvironment env;
  if (s.export_file) {
    bool fd = std::all_of(s.export_file->begin(), s.export_file->end(),
                          [](char c) { return c >= '0' && c <= '9'; });
    std::string path = fd ? "/dev/fd/" + *s.export_file : Absolute(*s.export_file, in.cwd);
    Result<std::string> content = in.read_file(path);
    if (!content)
      return Fail(
          fmt::format("Unable to read --export-file {}: {}", *s.export_file, content.error()));
    char separator = content->find('\0') != std::string::npos ? '\0' : '\n';
    for (const std::string& entry : Split(*content, separator)) env.SetEntry(entry);
  }
  auto copy_all = [&] {
    for (const auto& [name, value] : caller) env.Set(name, value);
  };
  auto copy_slurm = [&] {
    for (const auto& [name, value] : caller)
      if (name.starts_with("SLURM_")) env.Set(name, value);
  };
  if (!s.export_env || EqualsIgnoreCase(*s.export_env, "ALL")) {
    copy_all();
  } else if (EqualsIgnoreCase(*s.export_env, "NONE")) {
    copy_slurm();
  } else {
    Result<std::vector<std::string>> words = ExportWords(*s.export_env);
    if (!words) return std::move(words).take_error();
    for (const std::string& word : *words) {
      if (EqualsIgnoreCase(word, "ALL")) {
        copy_all();
      } else if (word.find('=') != std::string::npos) {
        env.SetEntry(word);
      } else if (auto found = caller.find(word); found != caller.end()) {
        env.Set(found->first, found->second);
      }
    }
    copy_slurm();
  }
  return env.Lines();
}

}  // namespace drover::cli::sbatch
