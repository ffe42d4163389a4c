#pragma once
// The summary of an aggregate capture (docs/aggregate.md): the kernel, memory-operation and
// device-memory tables from the aggregate rows (Summary::from_aggregate_mode says what each
// field then holds). Private to analyzer/summary.

#include "fuselens/db/Aggregate.h"
#include "summary/Summary.h"

namespace fuselens::analyzer {

/// Replaces summary.kernels (grouped by `names`), memory_operations and device_memory with the
/// whole run's statistics of `set`, sets from_aggregate_mode, sketch_alpha and traced_records
/// (summarize computes the totals from the rows afterwards).
/// Kernel rows of one name merge their sketches (one alpha per capture: the first process's;
/// a row of another alpha keeps its counts and totals but not its quantiles).
void apply_aggregates(Summary& summary, const db::AggregateSet& set, NameKind names);

}  // namespace fuselens::analyzer
