// Errors and warnings from configuration files; see diagnostics.h.
#include "common/diagnostics.h"

#include <fmt/format.h>

namespace drover {

std::string Diagnostic::ToString() const {
  if (where.file.empty()) return message;
  if (where.line <= 0) return fmt::format("{}: {}", where.file, message);
  return fmt::format("{}:{}: {}", where.file, where.line, message);
}

void Diagnostics::Error(const SourceLocation& where, std::string message) {
  errors_.push_back({where, std::move(message)});
}

void Diagnostics::Warning(const SourceLocation& where, std::string message) {
  warnings_.push_back({where, std::move(message)});
}

}  // namespace drover
