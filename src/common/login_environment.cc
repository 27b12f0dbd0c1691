// See login_environment.h.
#include "common/login_environment.h"

#include <fmt/format.h>

#include <cctype>

namespace drover {

Result<std::optional<UserEnvironmentRequest>> ParseUserEnvironmentRequest(std::string_view text) {
  if (text.empty()) return std::optional<UserEnvironmentRequest>();
  UserEnvironmentRequest request;
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits > 0) {
    if (digits > 6) return MakeError(fmt::format("--get-user-env={}: timeout too long", text));
    request.timeout_seconds = std::stoi(std::string(text.substr(0, digits)));
  }
  std::string_view mode = text.substr(digits);
  if (mode == "S" || mode == "s" || mode == "L" || mode == "l")
    request.mode = static_cast<char>(std::toupper(static_cast<unsigned char>(mode[0])));
  else if (!mode.empty())
    return MakeError(fmt::format("--get-user-env={}: expected [timeout][S|L]", text));
  return std::optional<UserEnvironmentRequest>(request);
}

}  // namespace drover
