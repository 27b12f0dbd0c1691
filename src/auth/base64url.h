// Base64url without padding (RFC 4648 §5): how auth/slurm puts binary payloads and MACs into a
// credential that travels as a gRPC metadata value. Decoding is strict (no padding, no
// whitespace, no stray bits), so one token has one spelling.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace drover::auth {

std::string Base64UrlEncode(std::string_view bytes);
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace drover::auth
