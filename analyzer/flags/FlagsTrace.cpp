#include "flags/FlagsTrace.h"

#include <algorithm>
#include <climits>
#include <exception>
#include <mutex>
#include <numeric>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"
#include "fuselens/db/Writer.h"

namespace fuselens::analyzer {
namespace {

using Strings = db::StringCache;

// FlagsTrace::intern for loaders on several threads: each distinct name goes through the
// trace's set once, under a lock; a loader keeps the views it got by name id (`Names`).
class SharedInterner {
 public:
  explicit SharedInterner(FlagsTrace& t) : t_(t) {}
  std::string_view operator()(std::string_view text) {
    const std::lock_guard<std::mutex> lock(mutex_);
    return t_.intern(text);
  }

 private:
  FlagsTrace& t_;
  std::mutex mutex_;
};

// One loader's names: string id -> the view into FlagsTrace::texts.
class Names {
 public:
  Names(Strings& strings, SharedInterner& intern) : strings_(strings), intern_(intern) {}
  std::string_view get(std::int64_t id) {
    const auto [it, fresh] = seen_.try_emplace(id);
    if (fresh) it->second = intern_(strings_.get(id));
    return it->second;
  }
  std::string_view text(const std::string& value) {
    const auto [it, fresh] = texts_.try_emplace(value);
    if (fresh) it->second = intern_(value);
    return it->second;
  }

 private:
  Strings& strings_;
  SharedInterner& intern_;
  std::unordered_map<std::int64_t, std::string_view> seen_;
  std::unordered_map<std::string, std::string_view> texts_;
};

std::uint64_t correlation_key(std::uint32_t pid, std::uint32_t correlation_id) {
  return static_cast<std::uint64_t>(pid) << 32 | correlation_id;
}

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

void load_ranges(const db::Reader& reader, Strings& strings, FlagsTrace& t) {
  auto ranges = db::nvtx_ranges(reader, /*with_style=*/false);
  while (auto s = ranges.next()) {
    TraceRange r;
    r.pid = u32(s->pid);
    r.tid = u32(s->tid);
    const std::string& domain = strings.get(s->domain_id);
    const std::string& text = strings.get(s->text_id);
    if (db::is_fuselens_instrumentation(text)) continue;  // FuseLens's own ranges
    r.name = domain.empty() ? text : domain + ":" + text;
    r.start_ns = s->start_ns;
    if (s->end_ns) r.end_ns = *s->end_ns;
    r.depth = u32(s->depth);
    const auto kind = static_cast<db::PayloadKind>(s->payload_kind);
    const bool integer = kind == db::PayloadKind::UInt64 || kind == db::PayloadKind::Int64 ||
                         kind == db::PayloadKind::UInt32 || kind == db::PayloadKind::Int32;
    if (integer && s->payload_int) r.payload_int = *s->payload_int;
    t.ranges.push_back(std::move(r));
  }
  std::sort(t.ranges.begin(), t.ranges.end(), [](const TraceRange& a, const TraceRange& b) {
    return std::tie(a.pid, a.tid, a.start_ns, a.depth) <
           std::tie(b.pid, b.tid, b.start_ns, b.depth);
  });
}

void load_calls(const db::Reader& reader, Names& names, FlagsTrace& t) {
  auto calls = db::api_calls_by_start(reader);
  while (auto s = calls.next()) {
    TraceCall c;
    c.pid = u32(s->pid);
    c.tid = u32(s->tid);
    c.name = names.get(s->name_id);
    c.base_name = api_base_name(c.name);
    c.start_ns = s->start_ns;
    c.end_ns = s->end_ns;
    c.correlation_id = u32(s->correlation_id);
    t.calls.push_back(std::move(c));
  }
}

/// Sets TraceCall::range: one sweep per thread over its ranges (sorted by start) and its calls
/// (sorted by start) with a stack of open ranges. The stack top, after popping the ranges that
/// ended before the call, is the latest-starting range that contains the call.
void assign_ranges(FlagsTrace& t) {
  std::vector<std::size_t> order(t.calls.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const TraceCall& x = t.calls[a];
    const TraceCall& y = t.calls[b];
    return std::tie(x.pid, x.tid, x.start_ns) < std::tie(y.pid, y.tid, y.start_ns);
  });
  std::size_t next_range = 0;
  std::vector<std::size_t> open;
  std::pair<std::uint32_t, std::uint32_t> thread{0, 0};
  for (const std::size_t i : order) {
    TraceCall& call = t.calls[i];
    if (std::pair{call.pid, call.tid} != thread) {
      thread = {call.pid, call.tid};
      open.clear();
      while (next_range < t.ranges.size() &&
             std::pair{t.ranges[next_range].pid, t.ranges[next_range].tid} < thread) {
        ++next_range;
      }
    }
    while (next_range < t.ranges.size() && t.ranges[next_range].pid == call.pid &&
           t.ranges[next_range].tid == call.tid && t.ranges[next_range].start_ns <= call.start_ns) {
      open.push_back(next_range++);
    }
    while (!open.empty() && t.ranges[open.back()].end_ns < call.start_ns) open.pop_back();
    call.range = open.empty() ? -1 : static_cast<int>(open.back());
  }
}

// (pid, correlation id) key -> index of the earliest call with it, sorted by key (16 bytes a call:
// ten million calls in 160 MB, where a hash map took about four times that).
std::vector<std::pair<std::uint64_t, int>> launch_calls(const FlagsTrace& t) {
  std::vector<std::pair<std::uint64_t, int>> by_key;
  by_key.reserve(t.calls.size());
  for (std::size_t i = 0; i < t.calls.size(); ++i) {
    by_key.emplace_back(correlation_key(t.calls[i].pid, t.calls[i].correlation_id),
                        static_cast<int>(i));
  }
  // calls are sorted by start: the smallest index per key is the earliest.
  std::sort(by_key.begin(), by_key.end());
  by_key.erase(std::unique(by_key.begin(), by_key.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }),
               by_key.end());
  by_key.shrink_to_fit();
  return by_key;
}

// The fields every GPU operation cursor fills: pid, device_id, context_id, stream_id,
// correlation_id, start_ns, end_ns.
template <typename Row>
TraceOp gpu_op(OpKind kind, const Row& s) {
  TraceOp op;
  op.kind = kind;
  op.pid = u32(s.pid);
  op.device_id = u32(s.device_id);
  op.context_id = u32(s.context_id);
  op.stream_id = u32(s.stream_id);
  op.correlation_id = u32(s.correlation_id);
  op.start_ns = s.start_ns;
  op.end_ns = s.end_ns;
  return op;
}

void load_ops(const db::Reader& reader, Names& names, NameKind kind, FlagsTrace& t) {
  auto kernels = db::kernel_launches(reader, kind);
  while (auto k = kernels.next()) {
    TraceOp op = gpu_op(OpKind::Kernel, *k);
    op.name = names.get(k->name_id);
    t.ops.push_back(std::move(op));
  }
  auto copies = db::copy_launches(reader);
  while (auto c = copies.next()) {
    TraceOp op = gpu_op(OpKind::Memcpy, *c);
    op.copy_kind = static_cast<db::MemcpyKind>(c->copy_kind);
    op.src_kind = static_cast<db::MemoryKind>(c->src_kind);
    op.dst_kind = static_cast<db::MemoryKind>(c->dst_kind);
    op.bytes = c->bytes;
    op.is_async = c->is_async != 0;
    op.name = names.text(std::string("[CUDA memcpy ") + db::to_string(op.copy_kind) + "]");
    t.ops.push_back(std::move(op));
  }
  auto sets = db::memset_launches(reader);
  while (auto m = sets.next()) {
    TraceOp op = gpu_op(OpKind::Memset, *m);
    op.memory_kind = static_cast<db::MemoryKind>(m->memory_kind);
    op.bytes = m->bytes;
    op.is_async = m->is_async != 0;
    op.name = names.text("[CUDA memset]");
    t.ops.push_back(std::move(op));
  }
  std::stable_sort(t.ops.begin(), t.ops.end(), [](const TraceOp& a, const TraceOp& b) {
    return std::tie(a.start_ns, a.end_ns) < std::tie(b.start_ns, b.end_ns);
  });
}

void load_syncs(const db::Reader& reader, FlagsTrace& t) {
  auto rows = db::syncs(reader);
  while (auto s = rows.next()) {
    TraceSync e;
    e.pid = u32(s->pid);
    e.start_ns = s->start_ns;
    e.end_ns = s->end_ns;
    e.type = static_cast<db::SyncType>(s->sync_type);
    e.context_id = u32(s->context_id);
    e.stream_id = u32(s->stream_id);
    e.correlation_id = u32(s->correlation_id);
    t.syncs.push_back(e);
  }
}

// Runs `first` and `second` on threads, each with a twin of `reader` (Reader::twin), and `third`
// here on `reader`; returns what `third` returns once all three ended. A part whose twin cannot
// be opened, or that finds no thread (std::system_error), runs here after the others. The first
// exception of a part is rethrown once all three ended.
template <typename First, typename Second, typename Third>
auto in_parallel(const db::Reader& reader, const First& first, const Second& second,
                 const Third& third) {
  std::optional<db::Reader> twins[2];
  std::exception_ptr errors[2];
  const auto run = [&](int i, const auto& part) {
    try {
      twins[i].emplace(reader.twin());
    } catch (...) {
      return;  // no twin: run here afterwards
    }
    try {
      part(*twins[i]);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(2);  // no allocation once a thread runs: a throw would leave it unjoined
  try {
    threads.emplace_back([&] { run(0, first); });
    threads.emplace_back([&] { run(1, second); });
  } catch (const std::system_error&) {
  }
  const bool started[2] = {threads.size() > 0, threads.size() > 1};
  std::exception_ptr third_error;
  decltype(third(reader)) result{};
  try {
    result = third(reader);
  } catch (...) {
    third_error = std::current_exception();
  }
  for (auto& thread : threads) thread.join();
  for (const auto& twin : twins) {
    if (twin) reader.take_checks(*twin);
  }
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  if (third_error) std::rethrow_exception(third_error);
  if (!started[0] || !twins[0]) first(reader);
  if (!started[1] || !twins[1]) second(reader);
  return result;
}

}  // namespace

std::string_view api_base_name(std::string_view name) {
  const auto v = name.rfind("_v");
  if (v == std::string_view::npos || v == 0 || v + 2 == name.size()) return name;
  for (std::size_t i = v + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, v);
}

const std::vector<std::uint64_t>& FlagsTrace::args(const TraceOp& op) const {
  static const std::vector<std::uint64_t> kNone;
  return op.args_index >= 0 ? op_args[static_cast<std::size_t>(op.args_index)] : kNone;
}

const std::vector<CallPathFrame>* FlagsTrace::launch_context(const TraceOp& op) const {
  const TraceCall* call = launch_call(op);
  if (call == nullptr || call->context < 0) return nullptr;
  return &contexts[static_cast<std::size_t>(call->context)];
}

namespace {

// Frames that say nothing about the user's code on one line: the C library's process and thread
// start, the C++ library's plumbing (std::function, std::thread) and the compiler's kernel launch
// stubs (the frame above a stub is the launch site).
bool plumbing(const std::string& function) {
  for (const char* prefix : {"std::", "void std::", "__device_stub__", "__libc_start", "_start",
                             "start_thread", "clone"}) {
    if (function.rfind(prefix, 0) == 0) return true;
  }
  // Unsymbolized frames of the C library, and the C and C++ libraries folded (FramesMode::User).
  for (const char* folded : {"[libc.so", "[libstdc++", "[libgcc_s"}) {
    if (function.rfind(folded, 0) == 0) return true;
  }
  return function.rfind("libc.so", 0) == 0;
}

}  // namespace

std::string format_context(const std::vector<CallPathFrame>& path) {
  // "module+0xoffset": a frame no symbol covers.
  const auto module_of = [](const std::string& f) {
    const auto plus = f.find("+0x");
    return plus != std::string::npos && f.find_first_of("( ") == std::string::npos
               ? f.substr(0, plus)
               : std::string();
  };
  std::size_t first = path.size();
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i].function == "main") {
      first = i;
      break;
    }
    if (first == path.size() && module_of(path[i].function).empty()) first = i;
  }
  std::vector<std::string> names;
  std::string run_module;
  int run = 0;
  const CallPathFrame* last = nullptr;
  for (std::size_t i = first; i < path.size(); ++i) {
    const std::string& function = path[i].function;
    if (plumbing(function)) continue;
    last = &path[i];
    const std::string module = module_of(function);
    if (!module.empty() && module == run_module) {  // a run of unsymbolized frames: one item
      names.back() = module + " (" + std::to_string(++run) + " frames)";
      continue;
    }
    run_module = module;
    run = 1;
    const bool folded = function.rfind('[', 0) == 0;  // "[torch: aten::linear]": kept whole
    std::string name = module.empty() && !folded ? db::short_kernel_name(function) : function;
    names.push_back(name.empty() ? function : name);
  }
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : " > ") + name;
  // A folded frame ("[torch: aten::linear]", FramesMode) has no location: the line is the last
  // frame above it that has one (the user's line).
  while (last != nullptr && last->location.empty() && last->function.rfind('[', 0) == 0 &&
         last != path.data()) {
    --last;
  }
  if (last != nullptr && !last->location.empty()) out += " [" + last->location + "]";
  return out;
}

const TraceRange* FlagsTrace::launch_range(const TraceOp& op) const {
  const int i = launch_range_index(op);
  return i >= 0 ? &ranges[static_cast<std::size_t>(i)] : nullptr;
}

int FlagsTrace::launch_range_index(const TraceOp& op) const {
  const TraceCall* call = launch_call(op);
  return call != nullptr ? call->range : -1;
}

FlagsTrace load_flags_trace(const db::Reader& reader, NameKind names, FramesMode frames) {
  FlagsTrace t;
  t.cuda_used = !reader.processes().empty();
  t.devices = reader.devices();
  Strings strings(reader);
  strings.load_all();
  load_ranges(reader, strings, t);
  SharedInterner intern(t);
  // The launch calls, the GPU operations and the call paths are the three reads that grow with
  // every launch: on an unrestricted reader each of the first two runs on a thread and reader of
  // its own (Reader::twin) while this one reads the paths (a window's views belong to this
  // reader's connection: then one after another).
  const auto calls_part = [&](const db::Reader& r) {
    Strings own(r);
    own.load_all();
    Names call_names(own, intern);
    load_calls(r, call_names, t);
    assign_ranges(t);
  };
  const auto ops_part = [&](const db::Reader& r) {
    Strings own(r);
    own.load_all();
    Names op_names(own, intern);
    load_ops(r, op_names, names, t);
  };
  LaunchPaths paths;
  if (reader.restricted()) {
    calls_part(reader);
    ops_part(reader);
    paths = launch_paths(reader, frames);
  } else {
    paths = in_parallel(reader, calls_part, ops_part,
                        [&](const db::Reader& r) { return launch_paths(r, frames); });
  }
  load_syncs(reader, t);

  const auto by_key = launch_calls(t);
  const auto find_call = [&](std::uint32_t pid, std::uint32_t correlation) {
    const std::uint64_t key = correlation_key(pid, correlation);
    const auto it = std::lower_bound(by_key.begin(), by_key.end(), std::make_pair(key, INT_MIN));
    return it == by_key.end() || it->first != key ? -1 : it->second;
  };
  for (TraceOp& op : t.ops) op.call = find_call(op.pid, op.correlation_id);
  for (TraceSync& s : t.syncs) s.call = find_call(s.pid, s.correlation_id);

  t.contexts = std::move(paths.paths);
  for (const auto& path : t.contexts) t.context_texts.push_back(format_context(path));
  for (TraceCall& c : t.calls) {
    if (const auto path = paths.find(c.pid, c.correlation_id)) c.context = static_cast<int>(*path);
  }
  load_fusion_evidence(reader, names, t);

  std::int64_t origin = kOpenEnd;
  if (!t.ops.empty()) origin = std::min(origin, t.ops.front().start_ns);
  if (!t.calls.empty()) origin = std::min(origin, t.calls.front().start_ns);
  for (const TraceRange& r : t.ranges) origin = std::min(origin, r.start_ns);
  t.origin_ns = origin == kOpenEnd ? 0 : origin;
  return t;
}

}  // namespace fuselens::analyzer
