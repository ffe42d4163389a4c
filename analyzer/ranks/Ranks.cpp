// The ranks analysis (Ranks.h): ranks and devices, each rank's steps matched by number, HTA's
// temporal breakdown and communication/computation overlap per rank and step, and the
// collectives matched across ranks (arrivals, lateness, time blocked, the straggler).

#include "ranks/Ranks.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Records.h"
#include "fuselens/db/Strings.h"

namespace fuselens::analyzer {
namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;

/// a + b for durations, saturating at db::kMaxTimestampNs (both >= 0 in a checked capture).
std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  a = std::clamp<std::int64_t>(a, 0, db::kMaxTimestampNs);
  b = std::clamp<std::int64_t>(b, 0, db::kMaxTimestampNs);
  return a > db::kMaxTimestampNs - b ? db::kMaxTimestampNs : a + b;
}

/// One GPU operation of a process.
struct Work {
  std::int64_t pid = 0, correlation_id = 0, launch_ns = 0, start_ns = 0, end_ns = 0;
  std::int64_t device_id = 0;
  db::GpuTable table = db::GpuTable::Kernel;
  WorkClass work_class = WorkClass::Computation;
  const std::string* name = nullptr;  ///< kernels: the short name (StringCache keeps it)
};

/// Length of the union of `intervals` (sorted here). Every interval lies in [0, 2^62), so the
/// union's length fits.
std::int64_t union_length(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::int64_t total = 0, open = 0, close = 0;
  bool any = false;
  for (const auto& [s, e] : intervals) {
    if (e <= s) continue;
    if (!any || s > close) {
      if (any) total += close - open;
      open = s;
      close = e;
      any = true;
    } else {
      close = std::max(close, e);
    }
  }
  if (any) total += close - open;
  return total;
}

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

/// Every kernel, copy and memset with its launch time and class, ordered by (pid, launch,
/// correlation id, start).
std::vector<Work> read_work(const db::Reader& reader, db::StringCache& names) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> launch_of;
  db::api_call_first_starts(reader).for_each([&](const db::ApiCallRow& row) {
    launch_of[{row.pid, row.correlation_id}] = row.start_ns;
  });
  const auto launch = [&](std::int64_t pid, std::int64_t correlation, std::int64_t start) {
    const auto it = launch_of.find({pid, correlation});
    return it == launch_of.end() ? start : it->second;
  };
  std::vector<Work> work;
  db::kernel_details(reader, db::NameKind::Short).for_each([&](const db::KernelRow& row) {
    Work w{row.pid,
           row.correlation_id,
           launch(row.pid, row.correlation_id, row.start_ns),
           row.start_ns,
           row.end_ns,
           row.device_id,
           db::GpuTable::Kernel};
    const std::string& short_name = names.get(row.name_id);
    w.name = &short_name;
    w.work_class = is_communication_kernel(short_name, names.get(row.demangled_name_id))
                       ? WorkClass::Communication
                       : WorkClass::Computation;
    work.push_back(w);
  });
  db::copy_launches(reader).for_each([&](const db::CopyRow& row) {
    const bool peer = row.copy_kind == static_cast<std::int64_t>(db::MemcpyKind::PeerToPeer);
    work.push_back({row.pid, row.correlation_id, launch(row.pid, row.correlation_id, row.start_ns),
                    row.start_ns, row.end_ns, row.device_id, db::GpuTable::Memcpy,
                    peer ? WorkClass::Communication : WorkClass::Memory});
  });
  db::memset_launches(reader).for_each([&](const db::CopyRow& row) {
    work.push_back({row.pid, row.correlation_id, launch(row.pid, row.correlation_id, row.start_ns),
                    row.start_ns, row.end_ns, row.device_id, db::GpuTable::Memset,
                    WorkClass::Memory});
  });
  std::sort(work.begin(), work.end(), [](const Work& a, const Work& b) {
    return std::tuple(a.pid, a.launch_ns, a.correlation_id, a.start_ns) <
           std::tuple(b.pid, b.launch_ns, b.correlation_id, b.start_ns);
  });
  return work;
}

/// Ranks of the processes: process_rank rows, then the others with GPU work in pid order.
std::vector<RankInfo> assign_ranks(const db::Reader& reader, const std::set<std::int64_t>& busy,
                                   std::vector<std::string>& notes) {
  std::vector<RankInfo> ranks;
  std::map<int, std::int64_t> taken;  // rank -> pid
  std::set<std::int64_t> ranked;
  std::vector<std::pair<std::int64_t, std::string>> unranked;  // pid, note
  for (const db::ProcessRank& row : reader.process_ranks()) {
    if (auto it = taken.find(row.rank); it != taken.end()) {
      unranked.emplace_back(row.pid, "rank " + std::to_string(row.rank) + " also claimed by pid " +
                                         std::to_string(it->second));
      ranked.insert(row.pid);
      continue;
    }
    taken[row.rank] = row.pid;
    ranked.insert(row.pid);
    RankInfo info;
    info.rank = row.rank;
    info.pid = row.pid;
    info.local_rank = row.local_rank;
    info.world_size = row.world_size;
    info.launcher = row.launcher;
    info.host_name = row.host_name;
    ranks.push_back(std::move(info));
  }
  for (std::int64_t pid : busy) {
    if (ranked.count(pid) == 0) unranked.emplace_back(pid, "no launcher rank");
  }
  std::sort(unranked.begin(), unranked.end());
  // Ranks are in [0, 2^31) (Reader): count on in int64, stop at the int range.
  std::int64_t next = taken.empty() ? 0 : std::int64_t{taken.rbegin()->first} + 1;
  for (auto& [pid, note] : unranked) {
    if (next > std::numeric_limits<int>::max()) {
      notes.push_back("pid " + std::to_string(pid) + " left out: no rank after " +
                      std::to_string(std::numeric_limits<int>::max()));
      continue;
    }
    RankInfo info;
    info.rank = static_cast<int>(next++);
    info.pid = pid;
    info.launcher_rank = false;
    info.note = std::move(note);
    ranks.push_back(std::move(info));
  }
  std::sort(ranks.begin(), ranks.end(),
            [](const RankInfo& a, const RankInfo& b) { return a.rank < b.rank; });
  return ranks;
}

/// Fills the breakdown of `row` from the work launched in its step.
void fill_breakdown(RankStep& row, const std::vector<const Work*>& work) {
  std::vector<Interval> compute, communication, compute_or_comm, all;
  std::int64_t first = row.start_ns, last = row.end_ns;
  for (const Work* w : work) {
    const Interval i{w->start_ns, w->end_ns};
    all.push_back(i);
    first = std::min(first, w->start_ns);
    last = std::max(last, w->end_ns);
    if (w->table == db::GpuTable::Kernel) ++row.kernels;
    if (w->table == db::GpuTable::Memcpy) ++row.copies;
    if (w->table == db::GpuTable::Memset) ++row.memsets;
    if (w->work_class == WorkClass::Computation) {
      compute.push_back(i);
      compute_or_comm.push_back(i);
    } else if (w->work_class == WorkClass::Communication) {
      if (w->table == db::GpuTable::Kernel) ++row.nccl_kernels;
      communication.push_back(i);
      compute_or_comm.push_back(i);
    }
  }
  row.span_ns = last - first;  // both in [0, 2^62)
  const std::int64_t c = union_length(compute);
  const std::int64_t m = union_length(communication);
  const std::int64_t cm = union_length(compute_or_comm);
  row.busy_ns = union_length(all);
  row.compute_ns = c;
  row.communication_ns = cm - c;
  row.memory_ns = row.busy_ns - cm;
  row.idle_ns = row.span_ns - row.busy_ns;
  row.communication_union_ns = m;
  row.overlap_ns = m + c - cm;
}

/// Matches the collectives of step `number` across the present ranks of `rows` (one per rank,
/// in rank order) from their communication kernels `comm` (launch order); fills the rows'
/// blocked time and last arrivals and returns the step's collectives.
StepCollectives match_collectives(int number, std::vector<RankStep*>& rows,
                                  const std::vector<std::vector<const Work*>>& comm) {
  StepCollectives out;
  out.step = number;
  std::vector<std::size_t> present;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r]->present) present.push_back(r);
  }
  if (present.size() < 2) return out;
  bool equal = true;
  for (std::size_t r : present) equal = equal && comm[r].size() == comm[present[0]].size();
  if (!equal) {
    out.note = "collectives differ across ranks in step " + std::to_string(number) + ":";
    for (std::size_t i = 0; i < present.size(); ++i) {
      out.note += (i ? ", rank " : " rank ") + std::to_string(rows[present[i]]->rank) + " has " +
                  std::to_string(comm[present[i]].size());
    }
    return out;
  }
  for (std::size_t k = 0; k < comm[present[0]].size(); ++k) {
    const std::string& name = *comm[present[0]][k]->name;
    bool same = true;
    for (std::size_t r : present) same = same && *comm[r][k]->name == name;
    if (!same) {
      if (out.mismatched++ == 0) {
        out.note = "collective " + std::to_string(k + 1) + " of step " + std::to_string(number) +
                   ": names differ (";
        for (std::size_t i = 0; i < present.size(); ++i) {
          out.note += (i ? ", rank " : "rank ") + std::to_string(rows[present[i]]->rank) + " " +
                      *comm[present[i]][k]->name;
        }
        out.note += "); skipped";
      }
      continue;
    }
    ++out.collectives;
    std::int64_t last = -1, second = -1;
    std::size_t last_rank = 0;
    bool tie = false;
    for (std::size_t r : present) {
      const std::int64_t a = comm[r][k]->start_ns;
      if (a > last) {
        second = last;
        last = a;
        last_rank = r;
        tie = false;
      } else {
        if (a == last) tie = true;
        second = std::max(second, a);
      }
    }
    for (std::size_t r : present) {
      rows[r]->blocked_ns = add_sat(rows[r]->blocked_ns, last - comm[r][k]->start_ns);
    }
    if (!tie) {  // an exact tie holds no one up
      ++rows[last_rank]->last_in;
      rows[last_rank]->lateness_ns = add_sat(rows[last_rank]->lateness_ns, last - second);
    }
  }
  if (out.mismatched > 1) {
    out.note += " (" + std::to_string(out.mismatched) + " collectives skipped in all)";
  }
  RankStep* straggler = nullptr;
  for (std::size_t r : present) {
    RankStep* row = rows[r];
    if (row->last_in == 0) continue;
    if (straggler == nullptr || row->last_in > straggler->last_in ||
        (row->last_in == straggler->last_in && row->lateness_ns > straggler->lateness_ns)) {
      straggler = row;
    }
  }
  if (straggler != nullptr) {
    straggler->straggler = true;
    out.straggler = straggler->rank;
    out.straggler_last_in = straggler->last_in;
    out.straggler_lateness_ns = straggler->lateness_ns;
  }
  return out;
}

}  // namespace

bool is_communication_kernel(const std::string& short_name, const std::string& demangled) {
  if (starts_with(short_name, "nccl")) return true;
  const std::size_t from = starts_with(demangled, "void ") ? 5 : 0;
  return demangled.compare(from, 4, "nccl") == 0;
}

std::optional<double> RankStep::overlap_share() const {
  if (communication_union_ns <= 0) return std::nullopt;
  return static_cast<double>(overlap_ns) / static_cast<double>(communication_union_ns);
}

std::optional<double> RankSummary::overlap_share() const {
  if (communication_union_ns <= 0) return std::nullopt;
  return static_cast<double>(overlap_ns) / static_cast<double>(communication_union_ns);
}

RanksReport analyze_ranks(const db::Reader& reader, const Window* window,
                          const StepOptions& step_options) {
  RanksReport report;
  if (window != nullptr) {
    report.window = window->description;
    report.window_label = window->label;
  }
  db::StringCache names(reader);
  const std::vector<Work> work = read_work(reader, names);
  std::set<std::int64_t> busy;
  for (const Work& w : work) busy.insert(w.pid);
  report.ranks = assign_ranks(reader, busy, report.notes);
  report.distributed = busy.size() > 1 || !reader.process_ranks().empty();

  // Each process's steps over the whole capture, numbered within it.
  std::vector<std::vector<Step>> steps(report.ranks.size());
  bool any_steps = false;
  for (std::size_t r = 0; r < report.ranks.size(); ++r) {
    StepOptions options = step_options;
    options.pid = report.ranks[r].pid;
    try {
      StepReport found = analyze_steps(reader, options);
      steps[r] = std::move(found.steps);
      report.ranks[r].step_note = found.note;
    } catch (const StepError& e) {
      report.ranks[r].step_note = e.what();
    }
    any_steps = any_steps || !steps[r].empty();
  }
  const bool whole = window == nullptr || window->whole;
  // The step numbers described: those of which some rank's step starts inside the window.
  std::vector<int> numbers;
  if (any_steps) {
    std::size_t most = 0;
    for (const auto& list : steps) most = std::max(most, list.size());
    for (std::size_t k = 0; k < most; ++k) {
      bool inside = false;
      for (const auto& list : steps) {
        inside = inside || (k < list.size() && (whole || window->contains(list[k].start_ns)));
      }
      if (inside) numbers.push_back(static_cast<int>(k + 1));
    }
  } else {
    numbers.push_back(0);
  }

  // The work of each process, in launch order (read_work sorts by pid first).
  std::map<std::int64_t, std::pair<std::size_t, std::size_t>> range_of;
  for (std::size_t i = 0; i < work.size(); ++i) {
    auto [it, fresh] = range_of.try_emplace(work[i].pid, i, i + 1);
    if (!fresh) it->second.second = i + 1;
  }
  std::vector<std::set<std::int64_t>> devices(report.ranks.size());
  bool any_work = false;
  for (int number : numbers) {
    std::vector<RankStep> rows(report.ranks.size());
    std::vector<std::vector<const Work*>> comm(report.ranks.size());
    for (std::size_t r = 0; r < report.ranks.size(); ++r) {
      RankStep& row = rows[r];
      row.step = number;
      row.rank = report.ranks[r].rank;
      const auto span = range_of.find(report.ranks[r].pid);
      std::vector<const Work*> inside;
      if (number == 0) {
        if (span != range_of.end()) {
          for (std::size_t i = span->second.first; i < span->second.second; ++i) {
            if (whole || window->contains(work[i].launch_ns)) inside.push_back(&work[i]);
          }
        }
        row.start_ns = inside.empty() ? 0 : inside.front()->launch_ns;
        row.end_ns = row.start_ns;
      } else if (static_cast<std::size_t>(number) <= steps[r].size()) {
        const Step& s = steps[r][static_cast<std::size_t>(number - 1)];
        row.start_ns = s.start_ns;
        row.end_ns = s.end_ns;
        if (span != range_of.end()) {
          auto from = work.begin() + static_cast<std::ptrdiff_t>(span->second.first);
          const auto to = work.begin() + static_cast<std::ptrdiff_t>(span->second.second);
          from = std::lower_bound(from, to, s.start_ns,
                                  [](const Work& w, std::int64_t t) { return w.launch_ns < t; });
          for (; from != to && from->launch_ns < s.end_ns; ++from) inside.push_back(&*from);
        }
      } else {
        row.present = false;
        continue;
      }
      fill_breakdown(row, inside);
      for (const Work* w : inside) {
        if (w->table == db::GpuTable::Kernel && w->work_class == WorkClass::Communication)
          comm[r].push_back(w);
      }
      any_work = any_work || !inside.empty();
    }
    std::vector<RankStep*> pointers;
    for (auto& row : rows) pointers.push_back(&row);
    StepCollectives collectives = match_collectives(number, pointers, comm);
    for (const auto& row : rows) {
      if (!row.present && number > 0) {
        collectives.note += (collectives.note.empty() ? "" : "; ") + std::string("rank ") +
                            std::to_string(row.rank) + " has no step " + std::to_string(number);
      }
    }
    report.steps.push_back(std::move(collectives));
    for (auto& row : rows) report.rows.push_back(row);
  }
  // Devices: of the work launched in the window (also a rank's work outside its steps).
  for (std::size_t r = 0; r < report.ranks.size(); ++r) {
    if (const auto span = range_of.find(report.ranks[r].pid); span != range_of.end()) {
      for (std::size_t i = span->second.first; i < span->second.second; ++i) {
        if (whole || window->contains(work[i].launch_ns)) devices[r].insert(work[i].device_id);
      }
    }
    report.ranks[r].devices.assign(devices[r].begin(), devices[r].end());
  }

  for (const RankInfo& info : report.ranks) {
    RankSummary sum;
    sum.rank = info.rank;
    for (const RankStep& row : report.rows) {
      if (row.rank != info.rank || !row.present) continue;
      ++sum.steps;
      sum.span_ns = add_sat(sum.span_ns, row.span_ns);
      sum.kernels = add_sat(sum.kernels, row.kernels);
      sum.nccl_kernels = add_sat(sum.nccl_kernels, row.nccl_kernels);
      sum.busy_ns = add_sat(sum.busy_ns, row.busy_ns);
      sum.compute_ns = add_sat(sum.compute_ns, row.compute_ns);
      sum.communication_ns = add_sat(sum.communication_ns, row.communication_ns);
      sum.memory_ns = add_sat(sum.memory_ns, row.memory_ns);
      sum.idle_ns = add_sat(sum.idle_ns, row.idle_ns);
      sum.communication_union_ns = add_sat(sum.communication_union_ns, row.communication_union_ns);
      sum.overlap_ns = add_sat(sum.overlap_ns, row.overlap_ns);
      sum.blocked_ns = add_sat(sum.blocked_ns, row.blocked_ns);
      sum.straggler_steps += row.straggler ? 1 : 0;
    }
    report.summary.push_back(sum);
  }

  if (report.ranks.empty() || !any_work) report.notes.push_back("no GPU work in the window");
  if (report.ranks.size() == 1) {
    report.notes.push_back("one rank (pid " + std::to_string(report.ranks[0].pid) +
                           "): no collectives to match");
  }
  if (any_steps && report.ranks.size() > 1 && window != nullptr && window->first_step > 0) {
    report.notes.push_back(
        "step numbers here count each rank's own steps; the window's count the steps of all "
        "processes together");
  }
  if (!any_steps && report.ranks.size() > 0) {
    report.notes.push_back(
        "no steps found in any process: each rank's whole window is one step (number 0)");
  }
  return report;
}

}  // namespace fuselens::analyzer
