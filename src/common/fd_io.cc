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

std::string ReadToEnd(int fd) {
  std::string text;
  char buffer[1024];
  ssize_t got = 0;
  while ((got = ::read(fd, buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR))
    if (got > 0) text.append(buffer, static_cast<size_t>(got));
  return text;
}

}  // namespace drover
