#include "compiled/Compiled.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"
#include "modules/ModuleRanges.h"

namespace fuselens::analyzer {
namespace {

using json = nlohmann::json;

constexpr const char* kNotFused = "<not fused>";
constexpr std::int64_t kPythonFrame = 2;  // enum_frame_kind

std::string string_member(const json& doc, const char* key) {
  const auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// What the calling context of one node says: ATen ops (outermost first) and the lines of
/// generated Inductor code (files under a torchinductor cache folder) on the path.
struct NodeInfo {
  std::vector<std::string> ops;
  std::vector<std::string> sites;
};

/// Per-launch context facts of one capture: (pid, correlation) -> NodeInfo.
class Contexts {
 public:
  explicit Contexts(const db::Reader& reader) {
    if (!db::has_launch_contexts(reader)) return;
    auto frames = db::frames(reader);
    while (auto f = frames.next()) frames_.emplace(f->id, std::move(*f));
    auto nodes = db::cct_nodes(reader);
    while (auto n = nodes.next()) nodes_.emplace(n->id, std::make_pair(n->parent_id, n->frame_id));
    auto launches = db::launch_contexts(reader);
    while (auto l = launches.next()) launch_.emplace(key(l->pid, l->correlation_id), l->node_id);
  }

  const NodeInfo* of(std::int64_t pid, std::int64_t correlation) {
    const auto it = launch_.find(key(pid, correlation));
    return it == launch_.end() ? nullptr : &node(it->second);
  }

 private:
  static std::uint64_t key(std::int64_t pid, std::int64_t correlation) {
    return static_cast<std::uint64_t>(pid) << 32 |
           (static_cast<std::uint64_t>(correlation) & 0xFFFFFFFFU);
  }

  const NodeInfo& node(std::int64_t id) {
    // Iterative: walk up to the first memoized ancestor (or the root), then fill downwards.
    std::vector<std::int64_t> chain;
    std::int64_t at = id;
    while (at != 0 && !memo_.count(at)) {
      chain.push_back(at);
      const auto it = nodes_.find(at);
      at = it == nodes_.end() ? 0 : it->second.first;
      if (chain.size() > 100000) break;  // a cycle in a corrupt capture
    }
    const auto known = memo_.find(at);  // absent for the root, or past a corrupt cycle
    NodeInfo parent = known != memo_.end() ? known->second : NodeInfo{};
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      NodeInfo info = parent;
      const auto n = nodes_.find(*it);
      const auto f = n == nodes_.end() ? frames_.end() : frames_.find(n->second.second);
      if (f != frames_.end()) {
        const db::FrameRow& frame = f->second;
        if (frame.kind == kPythonFrame) {
          if (frame.file.find("torchinductor") != std::string::npos) {
            info.sites.push_back(frame.file + ":" + std::to_string(frame.line));
          }
        } else if (std::string op = aten_op_of_frame(frame.function); !op.empty()) {
          if (std::find(info.ops.begin(), info.ops.end(), op) == info.ops.end()) {
            info.ops.push_back(std::move(op));
          }
        }
      }
      parent = memo_.emplace(*it, std::move(info)).first->second;
    }
    static const NodeInfo kNone;
    const auto found = memo_.find(id);
    return found == memo_.end() ? kNone : found->second;
  }

  std::unordered_map<std::int64_t, db::FrameRow> frames_;
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> nodes_;
  std::unordered_map<std::uint64_t, std::int64_t> launch_;
  std::unordered_map<std::int64_t, NodeInfo> memo_;
};

/// One GPU operation with what its context says.
struct Operation {
  std::int64_t pid = 0, correlation = 0;
  std::string name;  ///< kernel name, "<gpu copy> ...", "<gpu memset>"
  OpCost cost;
};

std::vector<Operation> operations(const db::Reader& reader) {
  std::vector<Operation> out;
  for (const auto table : {db::GpuTable::Kernel, db::GpuTable::Memcpy, db::GpuTable::Memset}) {
    auto rows = db::gpu_operations(reader, table);
    while (auto r = rows.next()) {
      Operation op;
      op.pid = r->pid;
      op.correlation = r->correlation_id;
      constexpr std::string_view kKernel = "<gpu kernel> ";
      op.name = r->label.compare(0, kKernel.size(), kKernel) == 0 ? r->label.substr(kKernel.size())
                                                                  : r->label;
      op.cost = {static_cast<double>(r->duration_ns), 1, static_cast<double>(r->bytes)};
      out.push_back(std::move(op));
    }
  }
  return out;
}

/// The innermost module range (modules/ModuleRanges.h) around each launch (pid, correlation) on
/// its launching thread; empty when the capture has none.
std::map<std::pair<std::int64_t, std::int64_t>, std::string> launch_modules(
    const db::Reader& reader) {
  struct Range {
    std::int64_t start, end;
    std::string path;
  };
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Range>> ranges;  // (pid, tid)
  for (auto& r : module_ranges(reader).rows) {
    ranges[{r.pid, r.tid}].push_back({r.start, r.end, std::move(r.path)});
  }
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> out;
  if (ranges.empty()) return out;
  for (auto& [thread, list] : ranges) {
    // Outer first at an equal start; stable, so that module_ranges' order (outer first at an
    // equal start and end) decides the rest.
    std::stable_sort(list.begin(), list.end(), [](const Range& a, const Range& b) {
      return std::tie(a.start, b.end) < std::tie(b.start, a.end);
    });
  }
  // Earliest launching call of each correlation id, as the range projection takes it.
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<std::int64_t, std::int64_t>> calls;
  auto api = db::api_call_starts(reader);
  while (auto a = api.next()) {
    auto [it, fresh] = calls.try_emplace({a->pid, a->correlation_id}, a->tid, a->start_ns);
    if (!fresh && a->start_ns < it->second.second) it->second = {a->tid, a->start_ns};
  }
  for (const auto& [launch, call] : calls) {
    const auto it = ranges.find({launch.first, call.first});
    if (it == ranges.end()) continue;
    const auto& list = it->second;
    // The latest-starting range that contains the call is the innermost one.
    auto pos = std::upper_bound(list.begin(), list.end(), call.second,
                                [](std::int64_t t, const Range& r) { return t < r.start; });
    for (int walked = 0; pos != list.begin() && walked < 256; ++walked) {
      --pos;
      if (pos->end >= call.second) {
        out.emplace(launch, pos->path);
        break;
      }
    }
  }
  return out;
}

/// The mark of one compiled operation: a Triton/template kernel by name (several marks of one
/// name told apart by their site on the launch's path), an extern call by its site.
std::optional<std::size_t> match_mark(
    const Operation& op, const NodeInfo* info, const std::vector<InductorKernel>& kernels,
    const std::unordered_map<std::string, std::vector<std::size_t>>& by_name,
    const std::unordered_map<std::string, std::size_t>& by_site) {
  if (const auto it = by_name.find(op.name); it != by_name.end()) {
    std::size_t found = it->second.front();
    if (it->second.size() > 1 && info != nullptr) {
      for (const std::size_t i : it->second) {
        if (std::find(info->sites.begin(), info->sites.end(), kernels[i].site) !=
            info->sites.end()) {
          found = i;
        }
      }
    }
    return found;
  }
  if (info == nullptr) return std::nullopt;
  for (auto s = info->sites.rbegin(); s != info->sites.rend(); ++s) {
    if (const auto hit = by_site.find(*s); hit != by_site.end()) return hit->second;
  }
  return std::nullopt;
}

struct MarkIndex {
  std::unordered_map<std::string, std::vector<std::size_t>> by_name;
  std::unordered_map<std::string, std::size_t> by_site;
  explicit MarkIndex(const std::vector<InductorKernel>& kernels) {
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      if (!kernels[i].extern_call()) by_name[kernels[i].kernel].push_back(i);
      if (!kernels[i].site.empty()) by_site.emplace(kernels[i].site, i);
    }
  }
};

void finish_speedup(std::optional<double>& speedup, const OpCost& eager, const OpCost& compiled) {
  if (eager.gpu_ns > 0 && compiled.gpu_ns > 0) speedup = eager.gpu_ns / compiled.gpu_ns;
}

OpCost per_step(OpCost c, double steps) {
  c.gpu_ns /= steps;
  c.launches /= steps;
  c.bytes /= steps;
  return c;
}

/// The compiled module name an eager module path stands for: equal, or ending in "." + it (the
/// module view may name the root); the longest such; the path itself otherwise.
std::string match_module(const std::string& eager, const std::set<std::string>& compiled) {
  std::string best;
  bool found = false;
  for (const auto& c : compiled) {
    const bool match = eager == c || (c.empty() && eager.find('.') == std::string::npos) ||
                       (!c.empty() && eager.size() > c.size() &&
                        eager.compare(eager.size() - c.size(), c.size(), c) == 0 &&
                        eager[eager.size() - c.size() - 1] == '.');
    if (match && (!found || c.size() > best.size())) {
      best = c;
      found = true;
    }
  }
  return found ? best : eager;
}

}  // namespace

std::vector<std::string> InductorKernel::lines() const {
  std::vector<std::string> out;
  const auto add = [&out](const std::string& line) {
    if (!line.empty() && std::find(out.begin(), out.end(), line) == out.end()) out.push_back(line);
  };
  for (const auto& n : nodes) add(n.line);
  for (const auto& l : site_lines) add(l);
  return out;
}

void OpCost::add(const OpCost& o, double share) {
  gpu_ns += o.gpu_ns * share;
  launches += o.launches * share;
  bytes += o.bytes * share;
}

std::optional<InductorKernel> parse_inductor_mark(std::string_view text) {
  if (text.substr(0, kInductorMarkPrefix.size()) != kInductorMarkPrefix) return std::nullopt;
  const json doc = json::parse(text.substr(kInductorMarkPrefix.size()), nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  InductorKernel k;
  k.kernel = string_member(doc, "kernel");
  if (k.kernel.empty()) return std::nullopt;
  k.graph = string_member(doc, "graph");
  k.kind = string_member(doc, "kind");
  k.site = string_member(doc, "site");
  if (const auto t = doc.find("truncated"); t != doc.end() && t->is_boolean()) k.truncated = *t;
  if (const auto ops = doc.find("ops"); ops != doc.end() && ops->is_array()) {
    for (const auto& o : *ops) {
      if (o.is_string()) k.ops.push_back(fold_aten_op(o.get<std::string>()));
    }
  }
  if (const auto lines = doc.find("lines"); lines != doc.end() && lines->is_array()) {
    for (const auto& l : *lines) {
      if (l.is_string()) k.site_lines.push_back(l.get<std::string>());
    }
  }
  if (const auto nodes = doc.find("nodes"); nodes != doc.end() && nodes->is_array()) {
    for (const auto& n : *nodes) {
      if (!n.is_object()) continue;
      k.nodes.push_back(
          {string_member(n, "name"), string_member(n, "line"), string_member(n, "module")});
    }
  }
  return k;
}

std::vector<InductorKernel> inductor_kernels(const db::Reader& reader) {
  std::vector<std::pair<std::int64_t, InductorKernel>> found;
  db::StringCache strings(reader);
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  auto marks = db::nvtx_marks(reader);
  while (auto m = marks.next()) {
    const std::string& text = strings.get(m->text_id);
    if (text.compare(0, kInductorMarkPrefix.size(), kInductorMarkPrefix) != 0) continue;
    auto k = parse_inductor_mark(text);
    if (!k || !seen.insert({k->graph, k->kernel, k->site}).second) continue;
    found.emplace_back(m->start_ns, std::move(*k));
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<InductorKernel> out;
  for (auto& [t, k] : found) out.push_back(std::move(k));
  return out;
}

std::map<std::string, std::size_t> extern_kernel_names(const db::Reader& reader,
                                                       const std::vector<InductorKernel>& kernels) {
  std::map<std::string, std::size_t> out;
  const MarkIndex index(kernels);
  if (index.by_site.empty()) return out;
  Contexts contexts(reader);
  for (const Operation& op : operations(reader)) {
    if (index.by_name.count(op.name)) continue;
    const auto mark =
        match_mark(op, contexts.of(op.pid, op.correlation), kernels, index.by_name, index.by_site);
    if (mark && kernels[*mark].extern_call()) out.emplace(op.name, *mark);
  }
  return out;
}

std::map<std::string, std::string> compiled_kernel_sources(const db::Reader& reader) {
  std::map<std::string, std::string> out;
  const auto kernels = inductor_kernels(reader);
  if (kernels.empty()) return out;
  std::map<std::string, std::vector<std::size_t>> marks_of;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i].extern_call()) marks_of[kernels[i].kernel].push_back(i);
  }
  for (const auto& [name, i] : extern_kernel_names(reader, kernels)) marks_of[name].push_back(i);
  for (const auto& [name, marks] : marks_of) {
    std::vector<std::string> lines, ops;
    for (const std::size_t i : marks) {
      for (const auto& l : kernels[i].lines()) {
        const auto slash = l.rfind('/');
        std::string text = slash == std::string::npos ? l : l.substr(slash + 1);
        if (std::find(lines.begin(), lines.end(), text) == lines.end()) lines.push_back(text);
      }
      for (const auto& o : kernels[i].ops) {
        if (std::find(ops.begin(), ops.end(), o) == ops.end()) ops.push_back(o);
      }
    }
    std::string label = "<torch.compile>";
    for (std::size_t j = 0; j < lines.size(); ++j) label += (j ? ", " : " ") + lines[j];
    if (!ops.empty()) label += ":";
    for (std::size_t j = 0; j < ops.size(); ++j) label += (j ? ", " : " ") + ops[j];
    out.emplace(name, std::move(label));
  }
  return out;
}

std::string fold_aten_op(std::string_view name) {
  if (name.substr(0, 5) == "aten.") name.remove_prefix(5);
  std::string op(name);
  static const std::set<std::string> kLower = {"dim",        "out",          "int",   "self",
                                               "correction", "default",      "names", "input",
                                               "dtype",      "memory_format"};
  while (true) {
    const auto pos = op.rfind('_');
    if (pos == std::string::npos || pos == 0 || pos + 1 >= op.size()) break;
    const std::string tail = op.substr(pos + 1);
    const bool upper = tail.front() >= 'A' && tail.front() <= 'Z';
    if (!upper && !kLower.count(tail)) break;
    if (op.find_first_not_of('_') >= pos) break;  // nothing would be left
    op.erase(pos);
  }
  while (op.size() > 1 && op.back() == '_' && op.find_first_not_of('_') < op.size() - 1) {
    op.pop_back();  // in-place form: "add_" -> "add"
  }
  // One op, several ATen names: Inductor records the functional or decomposed form
  // (_native_batch_norm_legit_functional, native_batch_norm_backward) where eager dispatches the
  // user-facing op and its backend kernel (batch_norm > _batch_norm_impl_index >
  // cudnn_batch_norm; cudnn_batch_norm_backward). Each family reads as its user-facing name.
  static const std::map<std::string, std::string, std::less<>> kFamilies = {
      {"_native_batch_norm_legit_functional", "batch_norm"},
      {"_native_batch_norm_legit", "batch_norm"},
      {"_native_batch_norm_legit_no_training", "batch_norm"},
      {"native_batch_norm", "batch_norm"},
      {"_batch_norm_impl_index", "batch_norm"},
      {"cudnn_batch_norm", "batch_norm"},
      {"miopen_batch_norm", "batch_norm"},
      {"native_batch_norm_backward", "batch_norm_backward"},
      {"cudnn_batch_norm_backward", "batch_norm_backward"},
      {"miopen_batch_norm_backward", "batch_norm_backward"},
      {"_batch_norm_impl_index_backward", "batch_norm_backward"},
      {"_batch_norm_with_update", "batch_norm"},
      {"_batch_norm_with_update_functional", "batch_norm"},
      {"batch_norm_backward", "batch_norm_backward"},
  };
  if (const auto family = kFamilies.find(op); family != kFamilies.end()) return family->second;
  return op;
}

std::string aten_op_of_frame(std::string_view function) {
  constexpr std::string_view kOps = "at::_ops::";
  if (function.substr(0, kOps.size()) != kOps) return {};
  function.remove_prefix(kOps.size());
  const auto sep = function.find("::");
  if (sep == std::string_view::npos) return {};
  const std::string_view rest = function.substr(sep + 2);
  if (rest.substr(0, 4) != "call" && rest.substr(0, 10) != "redispatch") return {};
  return fold_aten_op(function.substr(0, sep));
}

CompiledReport compare_compiled(const db::Reader& eager, const db::Reader& compiled,
                                const std::vector<InductorKernel>& kernels, CompareBy by,
                                double eager_steps, double compiled_steps,
                                const std::map<std::string, std::size_t>& extern_names) {
  if (kernels.empty()) {
    throw CompiledError(compiled.path() +
                        " holds no torch.compile kernels (no fuselens:inductor marks: captured "
                        "without prof-run's Python instrumentation, or nothing was compiled)");
  }
  eager_steps = std::max(eager_steps, 1.0);
  compiled_steps = std::max(compiled_steps, 1.0);
  CompiledReport report;
  report.eager_path = eager.path();
  report.compiled_path = compiled.path();
  report.by = by;
  report.eager_steps = eager_steps;
  report.compiled_steps = compiled_steps;
  report.marks = static_cast<std::int64_t>(kernels.size());

  const MarkIndex index(kernels);

  // Compiled side: each operation to a fusion (mark index) or unmatched.
  std::vector<OpCost> fusion_cost(kernels.size());
  {
    Contexts contexts(compiled);
    for (const Operation& op : operations(compiled)) {
      report.compiled_total.add(op.cost);
      std::optional<std::size_t> fusion = match_mark(op, contexts.of(op.pid, op.correlation),
                                                     kernels, index.by_name, index.by_site);
      if (!fusion) {
        if (const auto it = extern_names.find(op.name);
            it != extern_names.end() && it->second < kernels.size()) {
          fusion = it->second;
        }
      }
      if (fusion) {
        fusion_cost[*fusion].add(op.cost);
      } else {
        report.compiled_unmatched.add(op.cost);
      }
    }
  }
  // Ops claimed by the fusions that ran, and by how many.
  std::map<std::string, int> claimants;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (fusion_cost[i].launches <= 0) continue;
    for (const auto& op : std::set<std::string>(kernels[i].ops.begin(), kernels[i].ops.end())) {
      ++claimants[op];
    }
  }

  // Eager side: each operation to an op (claimed or not) and a module.
  std::map<std::string, OpCost> eager_op;
  std::map<std::string, std::set<std::string>> eager_names;
  std::map<std::pair<std::string, std::string>, OpCost> eager_op_module;  // (op, module)
  {
    std::map<std::pair<std::int64_t, std::int64_t>, std::string> modules;
    if (by == CompareBy::Module) {
      modules = launch_modules(eager);
      if (modules.empty()) {
        throw CompiledError(eager.path() +
                            " holds no module ranges (fuselens:module:...): capture it with "
                            "prof-run's module view on to compare by module");
      }
    }
    Contexts contexts(eager);
    for (const Operation& op : operations(eager)) {
      report.eager_total.add(op.cost);
      const NodeInfo* info = contexts.of(op.pid, op.correlation);
      std::string name = "<no aten op>";
      if (info != nullptr && !info->ops.empty()) {
        name = info->ops.back();
        for (const auto& o : info->ops) {
          if (claimants.count(o)) {
            name = o;
            break;
          }
        }
      }
      if (!claimants.count(name)) {
        report.eager_unmatched.add(op.cost);
        continue;
      }
      eager_op[name].add(op.cost);
      eager_names[name].insert(op.name);
      if (by == CompareBy::Module) {
        const auto m = modules.find({op.pid, op.correlation});
        eager_op_module[{name, m == modules.end() ? "<no module>" : m->second}].add(op.cost);
      }
    }
  }

  // Fusion rows.
  std::map<std::string, GroupRow> groups;
  std::set<std::string> compiled_modules;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (fusion_cost[i].launches <= 0) continue;
    FusionRow row;
    row.kernel = kernels[i];
    row.compiled = per_step(fusion_cost[i], compiled_steps);
    std::vector<std::string> ops;  // the mark's order, each op once
    for (const auto& op : kernels[i].ops) {
      if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    }
    std::map<std::string, double> op_share;  // eager ns of each op's share
    for (const auto& op : ops) {
      const auto it = eager_op.find(op);
      if (it == eager_op.end()) continue;
      const double share = 1.0 / claimants.at(op);
      row.eager.add(per_step(it->second, eager_steps), share);
      op_share[op] = it->second.gpu_ns * share;
      for (const auto& n : eager_names[op]) {
        if (row.eager_kernels.size() < 8) row.eager_kernels.push_back(n);
      }
    }
    finish_speedup(row.speedup, row.eager, row.compiled);
    if (by == CompareBy::Op) {
      double total = 0;
      for (const auto& [op, ns] : op_share) total += ns;
      for (const auto& op : ops) {
        const double weight = total > 0 ? (op_share.count(op) ? op_share[op] / total : 0)
                                        : 1.0 / static_cast<double>(ops.size());
        GroupRow& g = groups[op];
        g.name = op;
        g.compiled.add(row.compiled, weight);
      }
    } else {
      std::set<std::string> mods;
      for (const auto& n : kernels[i].nodes) mods.insert(n.module);
      if (mods.empty()) mods.insert("<unknown>");
      for (const auto& m : mods) {
        compiled_modules.insert(m);
        GroupRow& g = groups[m.empty() ? "<root>" : m];
        g.name = m.empty() ? "<root>" : m;
        g.compiled.add(row.compiled, 1.0 / static_cast<double>(mods.size()));
      }
    }
    report.fusions.push_back(std::move(row));
  }
  if (by == CompareBy::Op) {
    for (const auto& [op, cost] : eager_op) {
      GroupRow& g = groups[op];
      g.name = op;
      g.eager.add(per_step(cost, eager_steps));
    }
  } else {
    // Inductor names modules from the compiled root ("attn.qkv"); the module view from the
    // variable holding it ("model.attn.qkv"). The prefix the matched paths lost is dropped from
    // the unmatched ones too, so both sides read alike ("model" itself is the root).
    std::string root_prefix;
    for (const auto& [key, cost] : eager_op_module) {
      const std::string m = match_module(key.second, compiled_modules);
      if (m != key.second && !m.empty()) {
        root_prefix = key.second.substr(0, key.second.size() - m.size());
        break;
      }
    }
    for (const auto& [key, cost] : eager_op_module) {
      std::string m = match_module(key.second, compiled_modules);
      if (m == key.second && !root_prefix.empty()) {
        if (m.rfind(root_prefix, 0) == 0) {
          m = m.substr(root_prefix.size());
        } else if (m + "." == root_prefix) {
          m.clear();
        }
      }
      if (m.empty()) m = "<root>";
      GroupRow& g = groups[m];
      g.name = m;
      g.eager.add(per_step(cost, eager_steps));
    }
  }
  report.eager_total = per_step(report.eager_total, eager_steps);
  report.compiled_total = per_step(report.compiled_total, compiled_steps);
  report.eager_unmatched = per_step(report.eager_unmatched, eager_steps);
  report.compiled_unmatched = per_step(report.compiled_unmatched, compiled_steps);
  for (auto& [name, g] : groups) {
    finish_speedup(g.speedup, g.eager, g.compiled);
    report.groups.push_back(std::move(g));
  }
  const auto by_eager_time = [](const auto& a, const auto& b) {
    if (a.eager.gpu_ns != b.eager.gpu_ns) return a.eager.gpu_ns > b.eager.gpu_ns;
    return a.compiled.gpu_ns > b.compiled.gpu_ns;
  };
  std::stable_sort(report.groups.begin(), report.groups.end(), by_eager_time);
  std::stable_sort(report.fusions.begin(), report.fusions.end(), by_eager_time);
  GroupRow rest;
  rest.name = kNotFused;
  rest.eager = report.eager_unmatched;
  rest.compiled = report.compiled_unmatched;
  finish_speedup(rest.speedup, rest.eager, rest.compiled);
  report.groups.push_back(std::move(rest));
  finish_speedup(report.speedup, report.eager_total, report.compiled_total);
  return report;
}

}  // namespace fuselens::analyzer
