#pragma once
// Private to db: the INSERTs of Writer::write_aggregates (AggregateStore.cpp), inside the
// caller's transaction.

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fuselens/db/Aggregate.h"
#include "fuselens/db/Sqlite.h"

namespace fuselens::db {

/// `names(mangled)` gives the short, demangled and mangled string ids of a kernel name.
void insert_aggregates(Connection& db, const AggregateSet& set,
                       const std::vector<std::int64_t>& node_ids,
                       const std::function<std::array<std::int64_t, 3>(const std::string&)>& names);

}  // namespace fuselens::db
