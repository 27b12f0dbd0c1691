// See fd_io.h.
#include "common/fd_io.h"

#include <unistd.h>

#include <cerrno>

namespace drover {

bool WriteFully(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    text.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

}  // namespace drover
