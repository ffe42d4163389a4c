// The PyTorch phase of each GPU operation and the forward context of backward ones
// (CallingContext.h, "Phases"; docs/calling-context.md).
#include <algorithm>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>

#include "cct/CallingContextData.h"
#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/TraceCursors.h"
#include "modules/ModuleRanges.h"

namespace fuselens::analyzer::cct {
namespace {

constexpr std::string_view kEvaluatePrefix = "autograd::engine::evaluate_function: ";
constexpr std::string_view kSeqMark = ", seq = ";
constexpr std::int64_t kOpen = std::numeric_limits<std::int64_t>::max();

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string_view base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_torch_module(std::string_view module) {
  const auto base = base_name(module);
  return starts_with(base, "libtorch") || starts_with(base, "libc10");
}

// What a native path says about PyTorch.
struct PathFacts {
  bool engine = false;  // inside the autograd engine's backward pass
  bool torch = false;   // some frame in libtorch / libc10
  bool python = false;  // some Python frame
  std::string node;     // innermost autograd node apply(): "AddmmBackward0"
};

PathFacts facts_of(const std::vector<const Frame*>& path) {
  PathFacts facts;
  std::string_view inner_helper;
  for (const Frame* f : path) {
    facts.python = facts.python || f->python;
    facts.torch = facts.torch || is_torch_module(f->module);
    const std::string_view fn = f->function;
    if (starts_with(fn, "torch::autograd::Engine::thread_main") ||
        starts_with(fn, "torch::autograd::Engine::evaluate_function")) {
      facts.engine = true;
    }
    if (starts_with(fn, "torch::autograd::")) {
      const auto apply = fn.find("::apply(");
      if (apply != std::string_view::npos) {
        const auto colon = fn.rfind("::", apply - 1);
        if (colon != std::string_view::npos && colon + 2 < apply) {
          facts.node = std::string(fn.substr(colon + 2, apply - colon - 2));
        }
      } else if (facts.engine && facts.node.empty()) {
        // Engine work outside a node's apply(), such as the reduction of a broadcast gradient
        // (torch::autograd::InputMetadata::reduce_grad): named by its function, skipping the
        // engine itself and the autograd wrappers every operator goes through.
        const std::string_view rest = fn.substr(std::string_view("torch::autograd::").size());
        if (!starts_with(rest, "Engine::") && !starts_with(rest, "VariableType::") &&
            !starts_with(rest, "python::") && !starts_with(rest, "generated::")) {
          inner_helper = rest.substr(0, rest.find('('));
        }
      }
    }
  }
  if (facts.node.empty() && !inner_helper.empty()) facts.node = std::string(inner_helper);
  return facts;
}

// An NVTX range of PyTorch's emit_nvtx: "OP, seq = N, op_id = M, ..." or
// "autograd::engine::evaluate_function: OP, op_id = M".
struct Range {
  std::int64_t pid = 0, tid = 0, start = 0, end = kOpen;
  std::string name;
  std::int64_t seq = -1;
  bool evaluate = false;  // an autograd engine evaluate_function range
  bool backward = false;  // evaluate, or inside one
};

Range parse_range(std::int64_t pid, std::int64_t tid, const std::string& text, std::int64_t start,
                  std::int64_t end) {
  Range r;
  r.pid = pid;
  r.tid = tid;
  r.start = start;
  r.end = end;
  std::string_view rest = text;
  if (starts_with(rest, kEvaluatePrefix)) {
    r.evaluate = r.backward = true;
    rest.remove_prefix(kEvaluatePrefix.size());
  }
  r.name = std::string(rest.substr(0, rest.find(", ")));
  const auto seq = rest.find(kSeqMark);
  if (seq != std::string_view::npos) {
    std::int64_t n = 0;
    bool digits = false;
    for (std::size_t i = seq + kSeqMark.size(); i < rest.size() && rest[i] >= '0' && rest[i] <= '9';
         ++i) {
      n = n * 10 + (rest[i] - '0');
      digits = true;
    }
    if (digits) r.seq = n;
  }
  return r;
}

using ThreadKey = std::pair<std::int64_t, std::int64_t>;  // pid, tid

// The module view's ranges (modules/ModuleRanges.h): bwd ranges by thread (by start), fwd ranges by
// (pid, path) (by end).
struct ModuleRangeMaps {
  std::map<ThreadKey, std::vector<Range>> backward;
  std::map<std::pair<std::int64_t, std::string>, std::vector<Range>> forward;
  bool empty() const { return backward.empty(); }
};

ModuleRangeMaps load_module_ranges(const db::Reader& reader) {
  ModuleRangeMaps m;
  for (auto& row : module_ranges(reader).rows) {
    Range range;
    range.pid = row.pid;
    range.tid = row.tid;
    range.start = row.start;
    range.end = row.end;
    range.name = std::move(row.path);
    range.backward = row.backward;
    if (range.backward) {
      m.backward[{row.pid, row.tid}].push_back(std::move(range));
    } else {
      m.forward[{row.pid, range.name}].push_back(std::move(range));
    }
  }
  for (auto& [key, list] : m.forward) {
    std::sort(list.begin(), list.end(),
              [](const Range& a, const Range& b) { return a.end < b.end; });
  }
  return m;
}

struct Timed {
  std::int64_t time;
  std::size_t op;
};

}  // namespace

std::vector<const Frame*> forward_context(const std::vector<const Frame*>& path) {
  std::size_t last_python = path.size();
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i]->python) last_python = i;
  }
  if (last_python < path.size())
    return {path.begin(), path.begin() + static_cast<std::ptrdiff_t>(last_python) + 1};
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (is_torch_module(path[i]->module)) {
      if (i == 0) break;
      return {path.begin(), path.begin() + static_cast<std::ptrdiff_t>(i)};
    }
  }
  return path;
}

OperationPhase unlinked_phase(const std::vector<const Frame*>& path) {
  const PathFacts f = facts_of(path);
  OperationPhase p;
  if (f.engine) {
    p.phase = CctPhase::Backward;
    p.backward_op = f.node;
  } else if (f.python || f.torch) {
    p.phase = CctPhase::Forward;
  }
  return p;
}

std::vector<OperationPhase> operation_phases(const db::Reader& reader,
                                             const std::vector<Operation>& ops,
                                             const NodeTable& nodes, const FrameMap& frames) {
  std::vector<OperationPhase> out(ops.size());
  std::unordered_map<std::int64_t, PathFacts> facts;  // by node
  for (const auto& op : ops) {
    if (op.node >= 0 && !facts.count(op.node))
      facts.emplace(op.node, facts_of(nodes.path(op.node, frames, true)));
  }

  // emit_nvtx ranges, when the capture has them, and the time of each operation's API call.
  std::map<ThreadKey, std::vector<Range>> ranges;
  if (reader.has_table("nvtx_range")) {
    auto rows = db::autograd_nvtx_ranges(reader);
    while (auto s = rows.next()) {
      ranges[{s->pid, s->tid}].push_back(
          parse_range(s->pid, s->tid, s->text, s->start_ns, *s->end_ns));
    }
  }
  const ModuleRangeMaps modules = load_module_ranges(reader);
  std::map<ThreadKey, std::vector<Timed>> calls;  // operations with a context, by call time
  const bool any_seq = std::any_of(ops.begin(), ops.end(), [](const Operation& op) {
    return op.forward_seq >= 0 || op.backward_seq >= 0;
  });
  if ((!ranges.empty() || !modules.empty() || any_seq) && reader.has_table("api_call")) {
    std::unordered_map<std::uint64_t, std::int64_t> call_start;
    auto key = [](std::int64_t pid, std::int64_t corr) {
      return (static_cast<std::uint64_t>(pid) << 32) ^ static_cast<std::uint64_t>(corr);
    };
    auto rows = db::api_call_first_starts(reader);
    while (auto s = rows.next()) call_start.emplace(key(s->pid, s->correlation_id), s->start_ns);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].node < 0) continue;
      const auto it = call_start.find(key(ops[i].pid, ops[i].correlation));
      if (it != call_start.end()) calls[{ops[i].pid, ops[i].tid}].push_back({it->second, i});
    }
    for (auto& [thread, list] : calls) {
      std::sort(list.begin(), list.end(),
                [](const Timed& a, const Timed& b) { return a.time < b.time; });
    }
  }

  // Ranges inside an evaluate_function range are backward; the rest with a sequence number are
  // the forward ops that created autograd nodes.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const Range*>>
      forward_by_seq;  // pid, seq
  for (auto& [thread, list] : ranges) {
    std::sort(list.begin(), list.end(),
              [](const Range& a, const Range& b) { return a.start < b.start; });
    std::vector<const Range*> evaluating;
    for (auto& r : list) {
      evaluating.erase(std::remove_if(evaluating.begin(), evaluating.end(),
                                      [&](const Range* e) { return e->end < r.start; }),
                       evaluating.end());
      for (const Range* e : evaluating) r.backward = r.backward || r.end <= e->end;
      if (r.evaluate) evaluating.push_back(&r);
      if (!r.backward && r.seq >= 0) forward_by_seq[{r.pid, r.seq}].push_back(&r);
    }
  }

  // Each operation's enclosing ranges (a sweep per thread): the innermost evaluate_function range
  // and the innermost range with a sequence number.
  std::vector<const Range*> evaluate_of(ops.size(), nullptr), seq_of(ops.size(), nullptr);
  for (const auto& [thread, list] : calls) {
    const auto r = ranges.find(thread);
    if (r == ranges.end()) continue;
    const auto& rs = r->second;
    std::size_t next = 0;
    std::vector<const Range*> active;
    for (const auto& c : list) {
      while (next < rs.size() && rs[next].start <= c.time) active.push_back(&rs[next++]);
      active.erase(std::remove_if(active.begin(), active.end(),
                                  [&](const Range* a) { return a->end < c.time; }),
                   active.end());
      for (const Range* a : active) {  // in start order: the last match is the innermost
        if (a->evaluate) evaluate_of[c.op] = a;
        if (a->seq >= 0) seq_of[c.op] = a;
      }
    }
  }

  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].node < 0) continue;
    const PathFacts& f = facts.at(ops[i].node);
    auto& p = out[i];
    if (f.engine || evaluate_of[i] || ops[i].backward_seq >= 0) {
      p.phase = CctPhase::Backward;
    } else if (f.python || f.torch) {
      p.phase = CctPhase::Forward;
    }
    if (p.phase != CctPhase::Backward) continue;
    p.backward_op = seq_of[i] && seq_of[i]->backward ? seq_of[i]->name
                    : evaluate_of[i]                 ? evaluate_of[i]->name
                                                     : f.node;
  }

  // Thread names for backward work without a forward link.
  std::map<ThreadKey, std::string> thread_names;
  if (reader.has_table("thread")) {
    auto rows = db::threads(reader, /*ordered=*/false);
    while (auto s = rows.next()) thread_names[{s->pid, s->tid}] = s->name.value_or(std::string());
  }

  // The forward context of each sequence number: the first forward launch inside the latest
  // forward range with that number (or inside the ranges enclosing it, when it launched nothing).
  auto first_launch_in = [&](const Range& f) -> std::int64_t {
    const auto it = calls.find({f.pid, f.tid});
    if (it == calls.end()) return -1;
    const auto& list = it->second;
    auto c = std::lower_bound(list.begin(), list.end(), f.start,
                              [](const Timed& t, std::int64_t v) { return t.time < v; });
    for (; c != list.end() && c->time <= f.end; ++c) {
      if (out[c->op].phase != CctPhase::Backward) return ops[c->op].node;
    }
    return -1;
  };
  auto enclosing = [&](const Range& f) -> const Range* {
    const auto it = ranges.find({f.pid, f.tid});
    const Range* best = nullptr;
    if (it == ranges.end()) return best;
    for (const auto& r : it->second) {
      if (&r == &f || r.backward || r.seq < 0 || r.start > f.start || r.end < f.end) continue;
      if (!best || r.start >= best->start) best = &r;
    }
    return best;
  };
  // The module view's link: a backward operation inside "fuselens:module:bwd:PATH" goes under the
  // first launch of the latest "fuselens:module:fwd:PATH" range (any thread of its process) that
  // ended before its call; PATH's parent module's when that range launched nothing.
  std::vector<const Range*> module_bwd_of(ops.size(), nullptr);
  std::vector<std::int64_t> call_time(ops.size(), 0);
  for (const auto& [thread, list] : calls) {
    for (const auto& c : list) call_time[c.op] = c.time;
    const auto r = modules.backward.find(thread);
    if (r == modules.backward.end()) continue;
    const auto& rs = r->second;
    std::size_t next = 0;
    std::vector<const Range*> open;
    for (const auto& c : list) {
      while (next < rs.size() && rs[next].start <= c.time) {
        while (!open.empty() && open.back()->end < rs[next].start) open.pop_back();
        open.push_back(&rs[next++]);
      }
      while (!open.empty() && open.back()->end < c.time) open.pop_back();
      if (!open.empty() && out[c.op].phase == CctPhase::Backward) module_bwd_of[c.op] = open.back();
    }
  }
  std::map<const Range*, std::int64_t> context_of_forward;
  auto module_forward_node = [&](const Range& bwd, std::int64_t time) -> std::int64_t {
    std::string path = bwd.name;
    for (int climb = 0; climb < 64 && !path.empty(); ++climb) {
      const auto f = modules.forward.find({bwd.pid, path});
      if (f != modules.forward.end()) {
        const auto& list = f->second;
        auto it = std::lower_bound(list.begin(), list.end(), time,
                                   [](const Range& r, std::int64_t v) { return r.end < v; });
        if (it != list.begin()) {
          const Range* fwd = &*std::prev(it);
          auto memo = context_of_forward.find(fwd);
          if (memo == context_of_forward.end())
            memo = context_of_forward.emplace(fwd, first_launch_in(*fwd)).first;
          if (memo->second >= 0) return memo->second;
        }
      }
      const auto dot = path.rfind('.');
      path = dot == std::string::npos ? std::string() : path.substr(0, dot);
    }
    return -1;
  };

  // Autograd sequence numbers recorded by the collector (schema 9): a backward operation of node
  // S goes under the first forward launch with forward_seq S + 1 (its op's), else the first one
  // of the next number (an op that launched nothing); modules/ModuleRanges.h says why the first.
  std::map<std::int64_t, std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>>
      forward_seqs;  // pid -> (seq, call time, node)
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].forward_seq >= 0 && ops[i].node >= 0 && out[i].phase != CctPhase::Backward)
      forward_seqs[ops[i].pid].emplace_back(ops[i].forward_seq, call_time[i], ops[i].node);
  }
  for (auto& [pid, list] : forward_seqs) std::sort(list.begin(), list.end());
  auto seq_forward_node = [&](std::int64_t pid, std::int64_t seq, std::int64_t time) {
    const auto it = forward_seqs.find(pid);
    if (it == forward_seqs.end()) return std::int64_t{-1};
    const auto& list = it->second;
    auto at = std::lower_bound(
        list.begin(), list.end(),
        std::make_tuple(seq + 1, std::numeric_limits<std::int64_t>::min(), std::int64_t{0}));
    for (; at != list.end(); ++at) {  // the first launch of that number (ModuleRanges.h)
      if (std::get<1>(*at) <= time) return std::get<2>(*at);
    }
    return std::int64_t{-1};
  };

  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> context_of_seq;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto& p = out[i];
    if (p.phase != CctPhase::Backward) continue;
    if (ops[i].backward_seq >= 0) {
      p.forward_node = seq_forward_node(ops[i].pid, ops[i].backward_seq, call_time[i]);
      if (p.forward_node >= 0) continue;
    }
    const Range* seq = seq_of[i];
    if (seq && seq->backward) {
      const std::pair<std::int64_t, std::int64_t> k{ops[i].pid, seq->seq};
      auto memo = context_of_seq.find(k);
      if (memo == context_of_seq.end()) {
        std::int64_t node = -1;
        const auto candidates = forward_by_seq.find(k);
        if (candidates != forward_by_seq.end()) {
          const Range* f = nullptr;
          for (const Range* c : candidates->second) {
            if (c->start <= seq->start && (!f || c->start >= f->start)) f = c;
          }
          for (int climb = 0; f && node < 0 && climb < 64; ++climb, f = enclosing(*f))
            node = first_launch_in(*f);
        }
        memo = context_of_seq.emplace(k, node).first;
      }
      p.forward_node = memo->second;
    }
    if (p.forward_node < 0 && module_bwd_of[i]) {
      p.forward_node = module_forward_node(*module_bwd_of[i], call_time[i]);
    }
    if (p.forward_node < 0) {
      const auto name = thread_names.find({ops[i].pid, ops[i].tid});
      p.thread = name != thread_names.end() && !name->second.empty()
                     ? name->second
                     : "tid " + std::to_string(ops[i].tid);
    }
  }
  return out;
}

}  // namespace fuselens::analyzer::cct
