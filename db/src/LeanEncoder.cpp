#include "LeanEncoder.h"

#include <sqlite3.h>

#include <limits>

#include "fuselens/db/Layout.h"

namespace fuselens::db {
namespace {

// FNV-1a over the fields' values.
template <typename... T>
std::size_t hash_fields(const T&... fields) {
  std::uint64_t h = 1469598103934665603ULL;
  ((h = (h ^ static_cast<std::uint64_t>(fields)) * 1099511628211ULL), ...);
  return static_cast<std::size_t>(h);
}

// b - a, saturated to the int64 range (records come from CUPTI or a capture; a bad one must not
// overflow: the reader's timestamp check then refuses what it reads back).
std::int64_t difference(std::int64_t b, std::int64_t a) {
  std::int64_t d = 0;
  if (__builtin_sub_overflow(b, a, &d)) {
    return b < a ? std::numeric_limits<std::int64_t>::min()
                 : std::numeric_limits<std::int64_t>::max();
  }
  return d;
}

}  // namespace

std::size_t KernelConfigHash::operator()(const KernelConfigKey& k) const {
  return hash_fields(k.mangled_id, k.pid, k.device_id, k.context_id, k.stream_id, k.grid_x,
                     k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z, k.registers,
                     k.static_shared, k.dynamic_shared, k.local_memory);
}

std::size_t ApiConfigHash::operator()(const ApiConfigKey& k) const {
  return hash_fields(k.name_id, k.pid, k.tid, k.domain, k.callback_id, k.return_code);
}

LeanEncoder::LeanEncoder(const Connection& db)
    : db_(db),
      kernels_(db,
               "INSERT INTO kernel_lean(id,config_id,correlation_delta,start_ns,duration_ns,"
               "graph_id,graph_node_id)",
               7),
      calls_(db, "INSERT INTO api_call_lean(id,config_id,correlation_delta,start_ns,duration_ns)",
             5),
      kernel_config_(db.prepare(
          "INSERT INTO kernel_config(pid,base_ns,device_id,context_id,stream_id,grid_x,grid_y,"
          "grid_z,block_x,block_y,block_z,registers_per_thread,static_shared_bytes,"
          "dynamic_shared_bytes,local_memory_per_thread,short_name_id,demangled_name_id,"
          "mangled_name_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")),
      api_config_(db.prepare("INSERT INTO api_config(pid,base_ns,tid,domain,callback_id,name_id,"
                             "return_code) VALUES(?,?,?,?,?,?,?)")) {}

bool LeanEncoder::near(const Slot& slot, std::int64_t start) {
  const std::int64_t d = difference(start, slot.base_ns);
  return d > -kLeanRebaseNs && d < kLeanRebaseNs;
}

void LeanEncoder::kernel(std::int64_t id, const KernelRecord& k, const rows::KernelNameIds& names) {
  const std::int64_t start = rows::i64(k.start_ns);
  const KernelConfigKey key{names.mangled_id,
                            k.pid,
                            k.device_id,
                            k.context_id,
                            k.stream_id,
                            k.grid_x,
                            k.grid_y,
                            k.grid_z,
                            k.block_x,
                            k.block_y,
                            k.block_z,
                            k.registers_per_thread,
                            k.static_shared_bytes,
                            k.dynamic_shared_bytes,
                            k.local_memory_per_thread};
  Slot* slot = last_kernel_slot_ != nullptr && key == last_kernel_key_
                   ? last_kernel_slot_
                   : &kernel_configs_.try_emplace(key).first->second;
  if (slot->id == 0 || !near(*slot, start)) {  // a new config, or a start too far from its base
    rows::Binder{kernel_config_}(k.pid)(start)(k.device_id)(k.context_id)(k.stream_id)(k.grid_x)(
        k.grid_y)(k.grid_z)(k.block_x)(k.block_y)(k.block_z)(k.registers_per_thread)(
        k.static_shared_bytes)(k.dynamic_shared_bytes)(k.local_memory_per_thread)(names.short_id)(
        names.demangled_id)(names.mangled_id)
        .run();
    *slot = {sqlite3_last_insert_rowid(db_.handle()), start};
  }
  last_kernel_key_ = key;
  last_kernel_slot_ = slot;
  rows::RowFiller f(kernels_);
  f(id)(slot->id)(difference(k.correlation_id, id))(difference(start, slot->base_ns))(
      difference(rows::i64(k.end_ns), start))(k.graph_id)(k.graph_node_id);
  f.next();
}

void LeanEncoder::api_call(std::int64_t id, const ApiCallRecord& a, std::int64_t name_id) {
  const std::int64_t start = rows::i64(a.start_ns);
  const ApiConfigKey key{name_id,       a.pid,        a.tid, static_cast<std::uint32_t>(a.domain),
                         a.callback_id, a.return_code};
  Slot* slot = last_api_slot_ != nullptr && key == last_api_key_
                   ? last_api_slot_
                   : &api_configs_.try_emplace(key).first->second;
  if (slot->id == 0 || !near(*slot, start)) {
    rows::Binder{api_config_}(a.pid)(start)(a.tid)(a.domain)(a.callback_id)(name_id)(a.return_code)
        .run();
    *slot = {sqlite3_last_insert_rowid(db_.handle()), start};
  }
  last_api_key_ = key;
  last_api_slot_ = slot;
  rows::RowFiller f(calls_);
  f(id)(slot->id)(difference(a.correlation_id, id))(difference(start, slot->base_ns))(
      difference(rows::i64(a.end_ns), start));
  f.next();
}

void LeanEncoder::flush() {
  kernels_.flush();
  calls_.flush();
}

void LeanEncoder::discard() {
  kernels_.discard();
  calls_.discard();
  kernel_configs_.clear();
  api_configs_.clear();
  last_kernel_slot_ = nullptr;
  last_api_slot_ = nullptr;
}

}  // namespace fuselens::db
