#pragma once
// Runs a program for a test and captures its exit status, stdout and stderr.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "TempDir.h"

namespace fuselens::test {

struct Result {
  int status = -1;  ///< exit code, or 128+N when killed by signal N
  std::string out, err;

  /// Lines of stderr, without empty trailing lines.
  std::vector<std::string> err_lines() const {
    std::vector<std::string> lines;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    return lines;
  }
};

inline std::string slurp(const std::string& path);

/// Runs argv[0] (a path) with the given arguments and extra environment ("NAME=value").
inline Result run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) {
  TempDir dir;
  const std::string out_path = dir.file("out"), err_path = dir.file("err");
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    ::dup2(err, 2);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(126);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  Result r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

/// The whole content of a file ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

#ifdef PROF_ANALYZE_PATH
/// Runs the built prof-analyze with `args` (the directory argument is kept for call sites that
/// name where the test works).
template <typename Dir>
Result run_cli(const Dir&, std::vector<std::string> args) {
  args.insert(args.begin(), PROF_ANALYZE_PATH);
  return run(args);
}
#endif

}  // namespace fuselens::test
