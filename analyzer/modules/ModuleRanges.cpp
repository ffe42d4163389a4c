// The module view's ranges, stored or derived from module frames (ModuleRanges.h).
#include "modules/ModuleRanges.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "cct/CallingContextData.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer {
namespace {

using Key = std::pair<std::int64_t, std::int64_t>;  // (pid, tid) or (pid, correlation id)

void stored_ranges(const db::Reader& reader, std::vector<ModuleRangeRow>& out) {
  if (!reader.has_table("nvtx_range")) return;
  auto rows = db::module_nvtx_ranges(reader);
  while (auto r = rows.next()) {
    const std::string_view text = r->text;
    ModuleRangeRow m;
    m.backward = text.substr(0, db::kModuleBackwardPrefix.size()) == db::kModuleBackwardPrefix;
    const bool forward =
        text.substr(0, db::kModuleForwardPrefix.size()) == db::kModuleForwardPrefix;
    if (!m.backward && !forward) continue;  // another fuselens:module: text
    m.path = std::string(text.substr(db::kModuleForwardPrefix.size()));
    if (m.path.empty()) continue;
    m.pid = r->pid;
    m.tid = r->tid;
    m.start = r->start_ns;
    m.end = r->end_ns.value_or(std::numeric_limits<std::int64_t>::max());
    out.push_back(std::move(m));
  }
}

struct Name {
  std::int64_t time;
  std::string cls, path;
};

// (pid, address) -> names by time, from "fuselens:module:name:ADDRESS:CLASS:PATH" marks.
std::map<std::pair<std::int64_t, std::uint64_t>, std::vector<Name>> name_marks(
    const db::Reader& reader) {
  std::map<std::pair<std::int64_t, std::uint64_t>, std::vector<Name>> out;
  if (!reader.has_table("nvtx_mark")) return out;
  auto rows = db::module_name_marks(reader);
  while (auto r = rows.next()) {
    const std::string_view rest = std::string_view(r->text).substr(db::kModuleNamePrefix.size());
    const auto colon1 = rest.find(':');
    if (colon1 == std::string_view::npos || colon1 == 0 || colon1 > 16) continue;
    const auto colon2 = rest.find(':', colon1 + 1);
    if (colon2 == std::string_view::npos || colon2 + 1 >= rest.size()) continue;
    std::uint64_t address = 0;
    bool hex = true;
    for (const char c : rest.substr(0, colon1)) {
      const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (digit < 0) hex = false;
      address = address * 16 + static_cast<std::uint64_t>(digit < 0 ? 0 : digit);
    }
    if (!hex) continue;
    out[{r->pid, address}].push_back({r->start_ns,
                                      std::string(rest.substr(colon1 + 1, colon2 - colon1 - 1)),
                                      std::string(rest.substr(colon2 + 1))});
  }
  return out;
}

struct Call {
  std::int64_t start = 0, end = 0, node = -1, forward_seq = -1, backward_seq = -1;
};

struct Instance {
  std::uint64_t address = 0;
  const std::string* cls = nullptr;
};

struct Open {
  std::uint64_t address;
  std::string path;
  std::int64_t start, end;
};

struct ForwardLaunch {
  std::int64_t seq, start;
  std::string path;  // innermost module; empty: none
};

void derived_ranges(const db::Reader& reader, std::vector<ModuleRangeRow>& out) {
  if (reader.schema_version() < 9 || !reader.has_table("api_context") ||
      !reader.has_table("api_call") || !db::has_launch_contexts(reader)) {
    return;
  }
  const auto frames = cct::load_frames(reader);
  bool any = false;
  for (const auto& [id, f] : frames) any = any || f.torch_module;
  if (!any) return;
  const auto nodes = cct::load_nodes(reader);
  const auto names = name_marks(reader);

  // Each traced call: its context and sequence numbers, its first start and last end.
  std::unordered_map<std::uint64_t, std::pair<Key, Call>> by_call;  // -> (pid, tid), call
  auto key = [](std::int64_t pid, std::int64_t corr) {
    return (static_cast<std::uint64_t>(pid) << 32) ^ static_cast<std::uint64_t>(corr);
  };
  {
    auto rows = db::launch_contexts(reader);
    while (auto c = rows.next()) {
      Call call;
      call.node = c->node_id;
      call.forward_seq = c->forward_seq;
      call.backward_seq = c->backward_seq;
      call.start = -1;
      by_call.emplace(key(c->pid, c->correlation_id), std::make_pair(Key{c->pid, c->tid}, call));
    }
  }
  {
    auto rows = db::api_calls_by_start(reader);
    while (auto a = rows.next()) {
      const auto it = by_call.find(key(a->pid, a->correlation_id));
      if (it == by_call.end()) continue;
      Call& c = it->second.second;
      if (c.start < 0) c.start = a->start_ns;
      c.end = std::max(c.end, a->end_ns);
    }
  }
  std::map<Key, std::vector<Call>> by_thread;
  for (auto& [k, entry] : by_call) {
    if (entry.second.start >= 0) by_thread[entry.first].push_back(entry.second);
  }
  by_call.clear();
  for (auto& [thread, calls] : by_thread) {
    std::sort(calls.begin(), calls.end(),
              [](const Call& a, const Call& b) { return a.start < b.start; });
  }

  // The module instances of a node's path, outermost first (memoized).
  std::unordered_map<std::int64_t, std::vector<Instance>> chains;
  auto chain = [&](std::int64_t node) -> const std::vector<Instance>& {
    auto [it, fresh] = chains.try_emplace(node);
    if (!fresh) return it->second;
    for (const cct::Frame* f : nodes.path(node, frames, /*show_internal=*/true)) {
      if (f->torch_module) it->second.push_back({f->address, &f->function});
    }
    return it->second;
  };
  auto name = [&](std::int64_t pid, const Instance& m, std::int64_t time,
                  const std::string& parent) {
    const auto it = names.find({pid, m.address});
    if (it != names.end()) {
      const Name* best = nullptr;
      for (const Name& n : it->second) {
        if (n.time <= time && n.cls == *m.cls) best = &n;
      }
      if (best) return best->path;
    }
    return parent.empty() ? *m.cls : parent + "." + *m.cls;
  };

  // Forward ranges, and each forward launch's innermost module for the backward link.
  std::map<std::int64_t, std::vector<ForwardLaunch>> forward_launches;  // by pid
  for (const auto& [thread, calls] : by_thread) {
    const std::int64_t pid = thread.first, tid = thread.second;
    std::vector<Open> open;
    auto close_from = [&](std::size_t depth) {
      while (open.size() > depth) {
        const Open& o = open.back();
        out.push_back({pid, tid, o.start, o.end, o.path, false, static_cast<int>(open.size() - 1)});
        open.pop_back();
      }
    };
    for (const Call& c : calls) {
      if (c.backward_seq >= 0) {
        close_from(0);
        continue;
      }
      const auto& instances = c.node >= 0 ? chain(c.node) : std::vector<Instance>();
      std::size_t same = 0;
      while (same < open.size() && same < instances.size() &&
             open[same].address == instances[same].address) {
        ++same;
      }
      close_from(same);
      for (std::size_t i = same; i < instances.size(); ++i) {
        open.push_back({instances[i].address,
                        name(thread.first, instances[i], c.start, i ? open[i - 1].path : ""),
                        c.start, c.end});
      }
      for (Open& o : open) o.end = std::max(o.end, c.end);
      if (c.forward_seq >= 0) {
        forward_launches[thread.first].push_back(
            {c.forward_seq, c.start, open.empty() ? std::string() : open.back().path});
      }
    }
    close_from(0);
  }
  for (auto& [pid, list] : forward_launches) {
    std::sort(list.begin(), list.end(), [](const ForwardLaunch& a, const ForwardLaunch& b) {
      return std::tie(a.seq, a.start) < std::tie(b.seq, b.start);
    });
  }

  // Backward ranges: each node's calls, under its forward op's module.
  for (const auto& [thread, calls] : by_thread) {
    const auto launches = forward_launches.find(thread.first);
    if (launches == forward_launches.end()) continue;
    const auto& list = launches->second;
    bool extend = false;  // out.back() is this thread's range of last_seq
    std::int64_t last_seq = -1;
    for (const Call& c : calls) {
      if (c.backward_seq < 0) {
        extend = false;
        continue;
      }
      auto it = std::lower_bound(list.begin(), list.end(), c.backward_seq + 1,
                                 [](const ForwardLaunch& f, std::int64_t v) { return f.seq < v; });
      // The first launch of the smallest sequence number above S that started before the call:
      // the op that created node S launches right after creating it; later launches with the
      // same number belong to ops that created no node (BatchNorm's num_batches_tracked += 1
      // runs in the next module before its own node is made).
      const ForwardLaunch* found = nullptr;
      for (; it != list.end() && !found; ++it) {
        if (it->start <= c.start) found = &*it;
      }
      if (!found || found->path.empty()) {
        extend = false;
        continue;
      }
      if (extend && last_seq == c.backward_seq && out.back().path == found->path) {
        out.back().end = std::max(out.back().end, c.end);
        continue;
      }
      out.push_back({thread.first, thread.second, c.start, c.end, found->path, true});
      extend = true;
      last_seq = c.backward_seq;
    }
  }
}

}  // namespace

ModuleRanges module_ranges(const db::Reader& reader) {
  ModuleRanges ranges;
  stored_ranges(reader, ranges.rows);
  if (ranges.rows.empty()) {
    derived_ranges(reader, ranges.rows);
    ranges.derived = !ranges.rows.empty();
  }
  std::stable_sort(ranges.rows.begin(), ranges.rows.end(),
                   [](const ModuleRangeRow& a, const ModuleRangeRow& b) {
                     return std::tie(a.pid, a.tid, a.start, b.end, a.depth) <
                            std::tie(b.pid, b.tid, b.start, a.end, b.depth);
                   });
  return ranges;
}

}  // namespace fuselens::analyzer
