#pragma once
// Internal to fuselens_db: the rows of the lean layout (Layout.h; db/schema.sql, "Version 10"),
// for Writer (records as they come) and convert_to_lean (the rows of a full-layout capture).

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "RowInsert.h"
#include "fuselens/db/Records.h"

namespace fuselens::db {

// What a kernel_config row and an api_config row hold besides their base time.
struct KernelConfigKey {
  std::int64_t mangled_id = 0;
  std::uint32_t pid = 0, device_id = 0, context_id = 0, stream_id = 0;
  std::int32_t grid_x = 0, grid_y = 0, grid_z = 0, block_x = 0, block_y = 0, block_z = 0;
  std::uint32_t registers = 0;
  std::int32_t static_shared = 0, dynamic_shared = 0;
  std::uint32_t local_memory = 0;
  bool operator==(const KernelConfigKey&) const = default;
};
struct ApiConfigKey {
  std::int64_t name_id = 0;
  std::uint32_t pid = 0, tid = 0, domain = 0, callback_id = 0, return_code = 0;
  bool operator==(const ApiConfigKey&) const = default;
};
struct KernelConfigHash {
  std::size_t operator()(const KernelConfigKey& k) const;
};
struct ApiConfigHash {
  std::size_t operator()(const ApiConfigKey& k) const;
};

/// Appends kernel_lean and api_call_lean rows, interning their config rows, inside the
/// caller's transaction. The ids are the caller's (rows are stored in the order given).
class LeanEncoder {
 public:
  explicit LeanEncoder(const Connection& db);

  /// The row of kernel `k` as kernel_lean row `id`, named by `names` (mangled_name unused).
  void kernel(std::int64_t id, const KernelRecord& k, const rows::KernelNameIds& names);
  /// The row of call `a` as api_call_lean row `id`, named by strings row `name_id`.
  void api_call(std::int64_t id, const ApiCallRecord& a, std::int64_t name_id);
  /// Stores the rows still waiting.
  void flush();
  /// After a failed transaction: forgets the rows waiting and the config rows written in it.
  void discard();

 private:
  // A config row: its id and the time its rows' starts are stored against.
  struct Slot {
    std::int64_t id = 0, base_ns = 0;
  };
  static bool near(const Slot& slot, std::int64_t start);

  const Connection& db_;
  rows::BulkInsert kernels_, calls_;
  Statement kernel_config_, api_config_;
  std::unordered_map<KernelConfigKey, Slot, KernelConfigHash> kernel_configs_;
  std::unordered_map<ApiConfigKey, Slot, ApiConfigHash> api_configs_;
  // The last config used (a launch loop repeats one): a hit skips hashing the key.
  KernelConfigKey last_kernel_key_;
  Slot* last_kernel_slot_ = nullptr;
  ApiConfigKey last_api_key_;
  Slot* last_api_slot_ = nullptr;
};

}  // namespace fuselens::db
