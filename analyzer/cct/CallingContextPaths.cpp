// launch_paths (CallingContext.h): the call path of every traced API call, for the flags rules.
// Reads the capture with the calling-context views' own loaders (CallingContextData.h).
#include <algorithm>
#include <utility>

#include "cct/CallingContext.h"
#include "cct/CallingContextData.h"
#include "cct/FrameFolding.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer {
namespace {

std::string location_of(const cct::Frame& f) {
  if (f.file.empty() || f.line == 0) return {};
  const auto slash = f.file.rfind('/');
  return (slash == std::string::npos ? f.file : f.file.substr(slash + 1)) + ":" +
         std::to_string(f.line);
}

}  // namespace

LaunchPaths launch_paths(const db::Reader& reader, FramesMode frames_mode) {
  LaunchPaths out;
  if (!reader.has_table("api_context")) return out;
  const cct::FrameMap frames = cct::load_frames(reader);
  const cct::NodeTable nodes = cct::load_nodes(reader);
  cct::FrameFolder folder(cct::resolve_frames_mode(frames_mode, frames));
  std::unordered_map<std::int64_t, std::uint32_t> by_node;
  auto contexts = db::launch_contexts(reader);
  while (auto s = contexts.next()) {
    const std::int64_t node = s->node_id;
    const auto [it, fresh] = by_node.emplace(node, static_cast<std::uint32_t>(out.paths.size()));
    if (fresh) {
      std::vector<CallPathFrame> path;
      for (const cct::Frame* f : folder.fold(nodes.path(node, frames, /*show_internal=*/false))) {
        path.push_back({f->function.empty() ? f->label : f->function, location_of(*f)});
      }
      out.paths.push_back(std::move(path));
    }
    const auto key = static_cast<std::uint64_t>(s->pid) << 32 |
                     (static_cast<std::uint64_t>(s->correlation_id) & 0xFFFFFFFFu);
    out.by_call.emplace_back(key, it->second);
  }
  // The first row of a key wins, as a map's emplace would keep it.
  std::stable_sort(out.by_call.begin(), out.by_call.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  out.by_call.erase(std::unique(out.by_call.begin(), out.by_call.end(),
                                [](const auto& a, const auto& b) { return a.first == b.first; }),
                    out.by_call.end());
  out.by_call.shrink_to_fit();
  return out;
}

std::optional<std::uint32_t> LaunchPaths::find(std::uint32_t pid,
                                               std::uint32_t correlation_id) const {
  const std::uint64_t key = static_cast<std::uint64_t>(pid) << 32 | correlation_id;
  const auto it = std::lower_bound(by_call.begin(), by_call.end(), key,
                                   [](const auto& e, std::uint64_t k) { return e.first < k; });
  if (it == by_call.end() || it->first != key) return std::nullopt;
  return it->second;
}

}  // namespace fuselens::analyzer
