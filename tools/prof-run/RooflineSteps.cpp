#include "RooflineSteps.h"

#include <sys/wait.h>
#include <unistd.h>

#include <iostream>
#include <vector>

#include "Color.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/RooflineStore.h"

namespace fuselens::collector {

int measure_ceilings(const std::filesystem::path& tools_dir, const std::string& capture) {
  const std::filesystem::path tool = tools_dir / "prof-ceilings";
  if (::access(tool.c_str(), X_OK) != 0) {
    std::cerr << fuselens::tools::diagnostic_prefix("prof-run", fuselens::tools::Tone::Warning)
              << "--measure-ceilings: " << tool.string() << " not found\n";
    return 127;
  }
  std::cerr << "[fuselens] measuring the GPU's ceilings (prof-ceilings) before the workload\n";
  const pid_t child = ::fork();
  if (child < 0) return 127;
  if (child == 0) {
    ::dup2(2, 1);  // the table goes to stderr with the rest of prof-run's messages
    const std::string into = capture;
    std::vector<char*> argv{const_cast<char*>(tool.c_str()), const_cast<char*>("--into"),
                            const_cast<char*>(into.c_str()), nullptr};
    ::execv(tool.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string counters_report_line(const db::Reader& reader) {
  try {
    const auto sessions = db::read_metric_sessions(reader);
    if (sessions.empty()) {
      return "counters: none recorded (the workload launched no kernel, or the collector could not "
             "subscribe to launches; see the [fuselens] lines above)";
    }
    std::string line;
    for (const auto& s : sessions) {
      if (!line.empty()) line += "; ";
      if (s.status != "ok") {
        line += "counters FAILED on device " + std::to_string(s.device_id) + ": " + s.status;
        continue;
      }
      line += "counters: set '" + s.metric_set + "' on device " + std::to_string(s.device_id) +
              ", " + std::to_string(s.metrics.size()) + " metrics, " + db::describe_replay(s) +
              ", " + std::to_string(s.ranges) + " launches profiled";
      if (s.unattributed_ranges > 0) {
        line += ", " + std::to_string(s.unattributed_ranges) + " ranges unattributed";
      }
    }
    return line;
  } catch (const std::exception& e) {
    return std::string("counters: cannot read the capture: ") + e.what();
  }
}

}  // namespace fuselens::collector
