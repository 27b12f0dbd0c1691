// Shared value parsing for the configuration field tables; see conf_fields.h.
#include "common/conf_fields.h"

namespace drover::conf {

std::optional<bool> ParseBool(std::string_view value) {
  for (std::string_view yes : {"YES", "TRUE", "1"})
    if (EqualsIgnoreCase(value, yes)) return true;
  for (std::string_view no : {"NO", "FALSE", "0"})
    if (EqualsIgnoreCase(value, no)) return false;
  return std::nullopt;
}

}  // namespace drover::conf
