// A PostgreSQL server of a test's own: initdb into a temporary folder, `postgres` on a port
// chosen now, listening on 127.0.0.1 and a socket in that folder, stopped by its PID when the
// object goes. Run as root, the server runs as the unprivileged `postgres` user (Debian's
// package makes it; PostgreSQL refuses to run as root). Test-only: never linked into a daemon.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "testing/free_port.h"

namespace drover::testing {

class PostgresServer {
 public:
  // The server, started and ready, with a database `drover` that user `drover` owns; an error
  // says what is missing (the binaries: Debian's postgresql, which scripts/setup installs).
  static Result<std::unique_ptr<PostgresServer>> Start() {
    std::string bin = BinDir();
    if (bin.empty())
      return MakeError(
          "PostgreSQL's server is not installed (no /usr/lib/postgresql/*/bin/postgres): install "
          "Debian's postgresql (scripts/setup does)");
    auto server = std::unique_ptr<PostgresServer>(new PostgresServer());
    std::string pattern = (std::filesystem::temp_directory_path() / "drover_pg.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) return MakeError("mkdtemp failed");
    server->dir_ = pattern;
    uid_t uid = ::geteuid();
    gid_t gid = ::getegid();
    if (uid == 0) {
      struct passwd* postgres = ::getpwnam("postgres");
      if (!postgres)
        return MakeError("running as root, and there is no `postgres` user to run the server as");
      uid = postgres->pw_uid;
      gid = postgres->pw_gid;
      if (::chown(pattern.c_str(), uid, gid) != 0) return MakeError("chown of the folder failed");
    }
    server->uid_ = uid;
    server->gid_ = gid;
    const std::string data = server->dir_ + "/data";
    if (int code = server->Run({bin + "/initdb", "-D", data, "-U", "drover", "--auth=trust", "-E",
                                "UTF8", "--locale=C", "--no-sync"},
                               server->dir_ + "/initdb.log");
        code != 0)
      return MakeError("initdb failed (exit " + std::to_string(code) +
                       "): " + server->ReadLog("initdb.log"));
    for (int attempt = 0; attempt < 5; ++attempt) {
      server->port_ = FreeLoopbackPort();
      server->pid_ = server->Spawn(server->ServerArgs(bin), server->dir_ + "/server.log");
      if (server->pid_ > 0 && server->WaitReady(bin)) break;
      server->Stop();
    }
    if (server->pid_ <= 0)
      return MakeError("postgres did not start: " + server->ReadLog("server.log"));
    if (int code = server->Run({bin + "/createdb", "-h", "127.0.0.1", "-p",
                                std::to_string(server->port_), "-U", "drover", "drover"},
                               server->dir_ + "/createdb.log");
        code != 0)
      return MakeError("createdb failed: " + server->ReadLog("createdb.log"));
    return server;
  }

  ~PostgresServer() {
    Stop();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // libpq's connection string for the test database, over TCP on loopback.
  std::string conninfo(const std::string& database = "drover") const {
    return "host=127.0.0.1 port=" + std::to_string(port_) + " user=drover dbname=" + database +
           " connect_timeout=5";
  }
  // Starts the server again after Stop(), on the same data and port (a restart under load).
  Status Restart() {
    if (pid_ > 0) return MakeError("the server is running");
    std::string bin = BinDir();
    pid_ = Spawn(ServerArgs(bin), dir_ + "/server.log");
    if (pid_ > 0 && WaitReady(bin)) return OkStatus();
    return MakeError("postgres did not start again: " + ReadLog("server.log"));
  }
  // Stops the server (fast shutdown: SIGINT, then SIGKILL after 20 s) and waits for it.
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGINT);
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = 0;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

 private:
  PostgresServer() = default;

  std::vector<std::string> ServerArgs(const std::string& bin) const {
    return {bin + "/postgres",
            "-D",
            dir_ + "/data",
            "-p",
            std::to_string(port_),
            "-k",
            dir_,
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "max_connections=50",
            "-c",
            "shared_buffers=16MB",
            "-c",
            "log_min_messages=warning"};
  }

  // The newest of Debian's /usr/lib/postgresql/N/bin with a postgres in it.
  static std::string BinDir() {
    std::vector<std::string> found;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", error))
      if (std::filesystem::exists(entry.path() / "bin" / "postgres"))
        found.push_back((entry.path() / "bin").string());
    std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    return found.empty() ? "" : found.back();
  }

  // Forks `argv` as the server's user, its output into `log`; the child's PID.
  pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) const {
    pid_t pid = ::fork();
    if (pid != 0) return pid;
    int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (out >= 0) {
      ::dup2(out, 1);
      ::dup2(out, 2);
    }
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(gid_) != 0 || ::setuid(uid_) != 0))
      ::_exit(126);
    ::setsid();
    // A test that dies without stopping it (a crash) stops it too: set after setuid, which
    // clears it.
    ::prctl(PR_SET_PDEATHSIG, SIGINT);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }

  int Run(const std::vector<std::string>& argv, const std::string& log) const {
    pid_t pid = Spawn(argv, log);
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // pg_isready until it answers (30 s), or the server exits.
  bool WaitReady(const std::string& bin) {
    for (int i = 0; i < 300; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = 0;
        return false;
      }
      if (Run({bin + "/pg_isready", "-q", "-h", "127.0.0.1", "-p", std::to_string(port_)},
              dir_ + "/ready.log") == 0)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  std::string ReadLog(const std::string& name) const {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    std::string log = text.str();
    return log.size() > 2000 ? log.substr(log.size() - 2000) : log;
  }

  std::string dir_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  int port_ = 0;
  pid_t pid_ = 0;
};

}  // namespace drover::testing
