#pragma once
// A program started in the background for a test that signals it while it runs (prof-run
// interrupted, killed, or forwarding a signal): its stdout and stderr go to files the test reads
// as they grow. Header-only, test support.
//
//   Spawned p({prof_run, "-o", path, "--", "/bin/sleep", "30"});
//   ASSERT_TRUE(p.wait_for_output("ready", std::chrono::seconds(30)));
//   ::kill(p.pid(), SIGTERM);
//   const int status = p.wait();   // exit code, or 128+N for signal N; -1 when waitpid failed

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "Subprocess.h"
#include "TempDir.h"

namespace fuselens::test {

class Spawned {
 public:
  /// Starts argv[0] (a path) with SIGINT, SIGTERM and SIGQUIT at their default actions (a test
  /// runner may have them ignored, which exec would keep). Throws std::runtime_error if fork fails.
  explicit Spawned(const std::vector<std::string>& argv) {
    out_path_ = dir_.file("out");
    err_path_ = dir_.file("err");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(out, 1);
      ::dup2(err, 2);
      for (const int s : {SIGINT, SIGTERM, SIGQUIT, SIGHUP}) ::signal(s, SIG_DFL);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(126);
    }
  }
  ~Spawned() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Spawned(const Spawned&) = delete;
  Spawned& operator=(const Spawned&) = delete;

  pid_t pid() const { return pid_; }
  std::string out() const { return slurp(out_path_); }
  std::string err() const { return slurp(err_path_); }

  /// True once stdout holds `text`; false after `timeout` or when the program ended first.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (out().find(text) != std::string::npos) return true;
      int status = 0;
      if (!reaped_ && ::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        status_ = decode(status);
        return out().find(text) != std::string::npos;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  /// Waits for the program to end: its exit code, or 128+N when signal N ended it.
  int wait() {
    if (!reaped_) {
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0) {
        if (errno != EINTR) return -1;
      }
      reaped_ = true;
      status_ = decode(status);
    }
    return status_;
  }

  /// Exit code, or 128+N for signal N, of a wait status.
  static int decode(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  TempDir dir_;
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = -1;
};

}  // namespace fuselens::test
