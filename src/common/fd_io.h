// Small POSIX file-descriptor helpers shared by the daemons.
#pragma once

#include <string_view>

namespace drover {

// Writes all of `text` to `fd`, retrying short writes and EINTR; stops quietly on an error
// (for diagnostics written where nobody could report a failure anyway).
void WriteFully(int fd, std::string_view text);

}  // namespace drover
