// What reading a configuration found wrong: errors (the file cannot be used) and warnings (it
// can, but something is probably not what the administrator meant). Each names file:line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace drover {

struct SourceLocation {
  std::string file;
  int line = 0;  // 0 when the problem is about the file as a whole
};

struct Diagnostic {
  SourceLocation where;
  std::string message;

  // "slurm.conf:12: unknown key 'Partitoin' (did you mean 'Partition'?)"
  std::string ToString() const;
};

class Diagnostics {
 public:
  void Error(const SourceLocation& where, std::string message);
  void Warning(const SourceLocation& where, std::string message);

  bool has_errors() const { return !errors_.empty(); }
  const std::vector<Diagnostic>& errors() const { return errors_; }
  const std::vector<Diagnostic>& warnings() const { return warnings_; }

 private:
  std::vector<Diagnostic> errors_;
  std::vector<Diagnostic> warnings_;
};

}  // namespace drover
