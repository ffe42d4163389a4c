-- FuseLens capture database, schema version 10.
--
-- One SQLite file per `prof-run`. `PRAGMA application_id` is 0x46534C4E ("FSLN") and
-- `PRAGMA user_version` is the schema version (10). Readers refuse other application ids and
-- newer versions. Versions add tables (and version 9 two columns): an older capture is read as a version-10 capture
-- whose newer tables (version 2: calling contexts, roofline ceilings and kernel metrics;
-- version 3: kernel arguments; version 4: the summary's stored aggregates; version 5: how
-- counters were replayed; version 6: steps and capture windows; version 7: CUDA graph nodes; version 8: ranks of distributed processes and how merged captures were placed; version 9: autograd sequence numbers in api_context and module frames;
-- version 10: stored results of cct and flags (stored_analysis*), the timeline's stored level of detail (timeline_lod*),
-- aggregate mode's statistics (aggregate_*), sampled tracing's step launch counts (sampling,
-- sample_step, sample_step_api), the lean trace layout's tables (kernel_config, kernel_lean,
-- api_config, api_call_lean; a lean capture reads kernel and api_call as views over them);
-- all below) are
-- absent, and analyses that need them say so or compute without them. Activity times (*_ns) are nanoseconds on CUPTI's timestamp clock
-- (cuptiGetTimestamp); `process.clock_offset_ns` is (UTC ns - CUPTI ns) measured when the collector
-- started in that process, so UTC = time + clock_offset_ns. `*_utc_ns` columns are UTC already.
-- Enumerations are stored as integers with stable values; the `enum_*` tables name them.
-- Strings that repeat (kernel names, API names, NVTX text and domains) are interned in `strings`.

CREATE TABLE IF NOT EXISTS strings (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL UNIQUE
);

-- One row: the run as `prof-run` saw it. end_* and exit_* are NULL until the run is finalized.
CREATE TABLE IF NOT EXISTS run (
  id                  INTEGER PRIMARY KEY CHECK (id = 1),
  command_line        TEXT    NOT NULL,  -- JSON array of argv
  working_directory   TEXT    NOT NULL,
  host_name           TEXT    NOT NULL,
  fuselens_version    TEXT    NOT NULL,
  trace               TEXT    NOT NULL,  -- activity groups requested, comma separated
  start_utc_ns        INTEGER NOT NULL,
  end_utc_ns          INTEGER,
  end_reason          INTEGER NOT NULL DEFAULT 0,  -- enum_end_reason
  exit_status         INTEGER,           -- workload exit code when end_reason = 1
  exit_signal         INTEGER,           -- signal number when end_reason = 2
  dropped_records     INTEGER NOT NULL DEFAULT 0,  -- sum over processes, set at finalize
  cuda_processes      INTEGER NOT NULL DEFAULT 0   -- processes that initialized CUDA
);

-- One row per process in which the collector was injected (i.e. that initialized CUDA).
CREATE TABLE IF NOT EXISTS process (
  pid                   INTEGER PRIMARY KEY,
  parent_pid            INTEGER NOT NULL,
  executable            TEXT    NOT NULL,
  start_utc_ns          INTEGER NOT NULL,
  end_utc_ns            INTEGER,          -- set when the collector flushed at exit
  clock_offset_ns       INTEGER NOT NULL DEFAULT 0,
  cuda_driver_version   INTEGER NOT NULL DEFAULT 0,  -- e.g. 13000 for 13.0
  cuda_runtime_version  INTEGER NOT NULL DEFAULT 0,  -- 0: no libcudart found in the process
  cupti_version         INTEGER NOT NULL DEFAULT 0,  -- cuptiGetVersion()
  dropped_records       INTEGER NOT NULL DEFAULT 0,  -- CUPTI drops + buffer-pool drops
  buffers_used          INTEGER NOT NULL DEFAULT 0,  -- activity buffers handed to CUPTI
  records_written       INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS thread (
  pid   INTEGER NOT NULL,
  tid   INTEGER NOT NULL,  -- OS thread id (gettid)
  name  TEXT,
  PRIMARY KEY (pid, tid)
);

-- Devices by CUDA ordinal as seen by the first process that used them.
CREATE TABLE IF NOT EXISTS device (
  id                        INTEGER PRIMARY KEY,
  uuid                      TEXT    NOT NULL,
  name                      TEXT    NOT NULL,
  compute_capability_major  INTEGER NOT NULL,
  compute_capability_minor  INTEGER NOT NULL,
  sm_count                  INTEGER NOT NULL,
  core_clock_khz            INTEGER NOT NULL,  -- peak SM clock
  memory_clock_khz          INTEGER NOT NULL,
  memory_bus_width_bits     INTEGER NOT NULL,
  global_memory_bytes       INTEGER NOT NULL,
  l2_cache_bytes            INTEGER NOT NULL,
  max_threads_per_sm        INTEGER NOT NULL,
  shared_memory_per_sm_bytes INTEGER NOT NULL,
  registers_per_sm          INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS kernel (
  id                    INTEGER PRIMARY KEY,
  pid                   INTEGER NOT NULL,
  start_ns              INTEGER NOT NULL,
  end_ns                INTEGER NOT NULL,
  device_id             INTEGER NOT NULL,
  context_id            INTEGER NOT NULL,
  stream_id             INTEGER NOT NULL,
  correlation_id        INTEGER NOT NULL,
  grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,
  block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,
  registers_per_thread  INTEGER NOT NULL,
  static_shared_bytes   INTEGER NOT NULL,
  dynamic_shared_bytes  INTEGER NOT NULL,
  local_memory_per_thread INTEGER NOT NULL,
  short_name_id         INTEGER NOT NULL REFERENCES strings(id),  -- function name only
  demangled_name_id     INTEGER NOT NULL REFERENCES strings(id),
  mangled_name_id       INTEGER NOT NULL REFERENCES strings(id),
  graph_id              INTEGER,  -- NULL unless launched as part of a CUDA graph
  graph_node_id         INTEGER
);

CREATE TABLE IF NOT EXISTS memcpy (
  id              INTEGER PRIMARY KEY,
  pid             INTEGER NOT NULL,
  start_ns        INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL,
  device_id       INTEGER NOT NULL,
  context_id      INTEGER NOT NULL,
  stream_id       INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL,
  copy_kind       INTEGER NOT NULL,  -- enum_memcpy_kind
  src_kind        INTEGER NOT NULL,  -- enum_memory_kind
  dst_kind        INTEGER NOT NULL,  -- enum_memory_kind
  bytes           INTEGER NOT NULL,
  is_async        INTEGER NOT NULL,
  graph_id        INTEGER,
  graph_node_id   INTEGER
);

CREATE TABLE IF NOT EXISTS memset (
  id              INTEGER PRIMARY KEY,
  pid             INTEGER NOT NULL,
  start_ns        INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL,
  device_id       INTEGER NOT NULL,
  context_id      INTEGER NOT NULL,
  stream_id       INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL,
  bytes           INTEGER NOT NULL,
  value           INTEGER NOT NULL,
  memory_kind     INTEGER NOT NULL,  -- enum_memory_kind
  is_async        INTEGER NOT NULL,
  graph_id        INTEGER,
  graph_node_id   INTEGER
);

-- Allocations and frees (CUPTI memory activity): one row per event.
CREATE TABLE IF NOT EXISTS memory_event (
  id              INTEGER PRIMARY KEY,
  pid             INTEGER NOT NULL,
  timestamp_ns    INTEGER NOT NULL,
  operation       INTEGER NOT NULL,  -- enum_memory_operation
  memory_kind     INTEGER NOT NULL,  -- enum_memory_kind
  address         INTEGER NOT NULL,
  bytes           INTEGER NOT NULL,
  device_id       INTEGER NOT NULL,
  context_id      INTEGER NOT NULL,
  stream_id       INTEGER NOT NULL,  -- 0 unless stream-ordered (cudaMallocAsync)
  correlation_id  INTEGER NOT NULL,
  is_async        INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS api_call (
  id              INTEGER PRIMARY KEY,
  pid             INTEGER NOT NULL,
  tid             INTEGER NOT NULL,
  domain          INTEGER NOT NULL,  -- enum_api_domain
  callback_id     INTEGER NOT NULL,  -- CUPTI cbid within the domain
  name_id         INTEGER NOT NULL REFERENCES strings(id),
  start_ns        INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL,
  return_code     INTEGER NOT NULL
);

-- NVTX push/pop and start/end ranges. depth = number of ranges open on the same thread when this
-- one started (0 = outermost). end_ns is NULL for a range never ended before the process exited.
CREATE TABLE IF NOT EXISTS nvtx_range (
  id            INTEGER PRIMARY KEY,
  pid           INTEGER NOT NULL,
  tid           INTEGER NOT NULL,
  domain_id     INTEGER NOT NULL REFERENCES strings(id),
  text_id       INTEGER NOT NULL REFERENCES strings(id),
  start_ns      INTEGER NOT NULL,
  end_ns        INTEGER,
  depth         INTEGER NOT NULL,
  category      INTEGER NOT NULL DEFAULT 0,
  color         INTEGER NOT NULL DEFAULT 0,
  payload_kind  INTEGER NOT NULL DEFAULT 0,  -- enum_payload_kind
  payload       NUMERIC                      -- integer or real, NULL when none
);

CREATE TABLE IF NOT EXISTS nvtx_mark (
  id            INTEGER PRIMARY KEY,
  pid           INTEGER NOT NULL,
  tid           INTEGER NOT NULL,
  domain_id     INTEGER NOT NULL REFERENCES strings(id),
  text_id       INTEGER NOT NULL REFERENCES strings(id),
  timestamp_ns  INTEGER NOT NULL,
  category      INTEGER NOT NULL DEFAULT 0,
  color         INTEGER NOT NULL DEFAULT 0,
  payload_kind  INTEGER NOT NULL DEFAULT 0,
  payload       NUMERIC
);

CREATE TABLE IF NOT EXISTS sync_event (
  id              INTEGER PRIMARY KEY,
  pid             INTEGER NOT NULL,
  start_ns        INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL,
  sync_type       INTEGER NOT NULL,  -- enum_sync_type
  context_id      INTEGER NOT NULL,
  stream_id       INTEGER NOT NULL,  -- 0 when not stream-specific
  cuda_event_id   INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL
);

-- Time CUPTI (and FuseLens) spent on profiling work inside the process: buffer flushes,
-- instrumentation, resource tracking.
CREATE TABLE IF NOT EXISTS overhead (
  id            INTEGER PRIMARY KEY,
  pid           INTEGER NOT NULL,
  overhead_kind INTEGER NOT NULL,  -- enum_overhead_kind
  object_kind   INTEGER NOT NULL,  -- 1 process, 2 thread, 3 device, 4 context, 5 stream
  object_id     INTEGER NOT NULL,
  start_ns      INTEGER NOT NULL,
  end_ns        INTEGER NOT NULL
);

-- Version 2: calling contexts. At the entry of every launch, copy, memset, allocation and
-- synchronization API call the collector unwinds the calling thread's native stack; the paths are
-- interned into one calling context tree (CCT) per process. A node is a frame under its parent;
-- the root of each process's tree has no parent and no frame. Frames are symbolized once per
-- distinct address when the process ends.
CREATE TABLE IF NOT EXISTS frame (
  id             INTEGER PRIMARY KEY,
  kind           INTEGER NOT NULL,  -- enum_frame_kind
  module_id      INTEGER REFERENCES strings(id),  -- executable or shared object path
  module_offset  INTEGER,           -- native: return address - module load address
  function_id    INTEGER REFERENCES strings(id),  -- demangled; NULL when no symbol covers it
  file_id        INTEGER REFERENCES strings(id),  -- source file, NULL without debug information
  line           INTEGER            -- source line, NULL without debug information
);

CREATE TABLE IF NOT EXISTS cct_node (
  id         INTEGER PRIMARY KEY,
  pid        INTEGER NOT NULL,
  parent_id  INTEGER REFERENCES cct_node(id),  -- NULL for the root of a process's tree
  frame_id   INTEGER REFERENCES frame(id)      -- NULL for the root
);

-- The calling context of each traced API call; joins api_call, kernel, memcpy and memset rows on
-- (pid, correlation_id).
CREATE TABLE IF NOT EXISTS api_context (
  pid             INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL,
  tid             INTEGER NOT NULL,
  cct_node_id     INTEGER NOT NULL REFERENCES cct_node(id),
  -- Version 9: PyTorch autograd sequence numbers (NULL outside PyTorch; docs/calling-context.md,
  -- "Modules"): forward_seq, the thread's next sequence number at a forward launch (the node its
  -- op created is forward_seq - 1); backward_seq, the sequence number of the autograd node being
  -- evaluated at a backward launch. A backward launch belongs to the forward op whose launch has
  -- forward_seq = backward_seq + 1.
  forward_seq     INTEGER,
  backward_seq    INTEGER,
  PRIMARY KEY (pid, correlation_id)
) WITHOUT ROWID;

-- Version 7: CUDA graph nodes, recorded with the calling contexts (trace group `context`), so that
-- a GPU operation replayed from a graph (kernel, memcpy or memset row with graph_node_id set) is
-- charged to the call that put it into the graph (docs/calling-context.md, "CUDA graphs"). One row
-- per event of CUPTI's resource callbacks, for kernel, memcpy and memset nodes:
--  - a node created by a traced call (CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED while the call is in
--    flight on the same thread: a launch, copy or memset under stream capture, or
--    cuGraphAdd{Kernel,Memcpy,Memset}Node / cuGraphAddNode): correlation_id is that call's, whose
--    calling context api_context holds; original_node_id is 0;
--  - a node cloned from another (CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: cuGraphInstantiate clones
--    every node of the graph into the executable graph, whose node ids the GPU operations carry;
--    cuGraphClone and child-graph nodes clone too): original_node_id is the node it was cloned
--    from; correlation_id is 0.
-- Node ids are CUPTI's (cuptiGetGraphNodeId), unique within a process; graph_id is the id of the
-- graph holding the node (cuptiGetGraphId), 0 when unknown. No key: a hostile or repeated row is
-- read, and the analyzer follows original_node_id links at most 64 steps.
CREATE TABLE IF NOT EXISTS graph_node (
  pid               INTEGER NOT NULL,
  node_id           INTEGER NOT NULL,
  original_node_id  INTEGER NOT NULL DEFAULT 0,
  graph_id          INTEGER NOT NULL DEFAULT 0,
  correlation_id    INTEGER NOT NULL DEFAULT 0
);

-- Version 8: the rank of each process that a distributed launcher started, read by the
-- collector from the environment the launcher set (docs/multi-gpu.md): torchrun and
-- torch.distributed (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE; launcher 'torch'), Open MPI
-- (OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE, _LOCAL_SIZE; 'openmpi'), MPICH/Hydra and other PMI
-- launchers (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID; 'pmi'), Slurm (SLURM_PROCID, SLURM_LOCALID,
-- SLURM_NTASKS; 'slurm'), the first of these that names a rank. No row for a process started
-- without one. host_name is the process's host (gethostname), so captures of several hosts merged
-- into one keep where each rank ran; clock alignment uses process.clock_offset_ns.
CREATE TABLE IF NOT EXISTS process_rank (
  pid               INTEGER PRIMARY KEY,
  rank              INTEGER NOT NULL,
  local_rank        INTEGER,
  world_size        INTEGER,
  local_world_size  INTEGER,
  launcher          TEXT    NOT NULL,
  host_name         TEXT    NOT NULL
);

-- Version 8: how `prof-analyze merge` placed each process of the captures it merged into this one
-- (docs/multi-gpu.md, "Merging per-rank captures"); no rows in a capture that was not merged. One
-- row per process of every input. Times of a process are on its own CUPTI clock; processes of one
-- host share that clock and are not moved; the processes of an input from another host are moved
-- onto the first input's clock by shift_ns = offset(input's host) - offset(first input's host),
-- the offsets being the medians of the hosts' process.clock_offset_ns (UTC - CUPTI), so that
-- UTC = t + offset holds on both sides. shift_ns was added to every *_ns time of the process's
-- rows and subtracted from its process.clock_offset_ns; the residual error of that placement is
-- the hosts' UTC synchronisation (NTP, PTP), which FuseLens cannot measure.
CREATE TABLE IF NOT EXISTS merge_source (
  pid          INTEGER PRIMARY KEY,
  input_index  INTEGER NOT NULL,  -- 0-based position of the input on the command line
  path         TEXT    NOT NULL,  -- the input file as given
  host_name    TEXT    NOT NULL,  -- process_rank.host_name, else the input's run.host_name
  shift_ns     INTEGER NOT NULL   -- added to the process's times; 0 on the first input's host
);

CREATE TABLE IF NOT EXISTS enum_frame_kind (value INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT OR IGNORE INTO enum_frame_kind VALUES (1, 'native'), (2, 'python'), (3, 'module');

-- Version 2: roofline. `ceiling`: what the running GPU reached in microbenchmarks
-- (`prof-ceilings`, or `prof-run --measure-ceilings`), the Empirical Roofline Toolkit's method.
-- name: 'dram_bandwidth', 'l2_bandwidth' (value in bytes/s, bytes read + bytes written),
-- 'fp32_fma', 'fp16_tensor', 'bf16_tensor' (value in FLOP/s, an FMA counted as 2 FLOP).
CREATE TABLE IF NOT EXISTS ceiling (
  id               INTEGER PRIMARY KEY,
  device_id        INTEGER NOT NULL,  -- CUDA ordinal, as device.id
  device_name      TEXT    NOT NULL,
  name             TEXT    NOT NULL,
  value            REAL    NOT NULL,  -- bytes/s or FLOP/s, see above
  method           TEXT    NOT NULL,  -- the microkernel or library call, sizes and repetitions
  measured_utc_ns  INTEGER NOT NULL
);

-- Hardware counters per kernel launch (`prof-run --metrics SET`): CUPTI Range Profiler, auto
-- range (one range per launch), kernel or application replay (metric_replay). Joins kernel rows on (pid, correlation_id).
-- metric_id names the metric as CUPTI does (e.g. 'dram__bytes_read.sum'); values are as CUPTI
-- evaluates them (counts, bytes).
CREATE TABLE IF NOT EXISTS kernel_metric (
  pid             INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL,
  metric_id       INTEGER NOT NULL REFERENCES strings(id),
  value           REAL    NOT NULL,
  PRIMARY KEY (pid, correlation_id, metric_id)
) WITHOUT ROWID;

-- One row per (process, device) on which counters were requested: what was asked, what it cost,
-- and why it failed when it did (status 'ok' or one line of error).
CREATE TABLE IF NOT EXISTS metric_session (
  pid                  INTEGER NOT NULL,
  device_id            INTEGER NOT NULL,
  metric_set           TEXT    NOT NULL,  -- as given to --metrics, e.g. 'roofline'
  metrics              TEXT    NOT NULL,  -- the CUPTI metric names collected, comma separated
  passes               INTEGER NOT NULL DEFAULT 0,  -- passes per launch (see metric_replay)
  ranges               INTEGER NOT NULL DEFAULT 0,  -- launches with counters stored
  unattributed_ranges  INTEGER NOT NULL DEFAULT 0,  -- ranges that matched no launch (dropped)
  status               TEXT    NOT NULL,
  PRIMARY KEY (pid, device_id)
);

-- Version 3: kernel arguments (trace group `args`, off by default). At the entry of each driver
-- kernel launch (cuLaunchKernel, cuLaunchKernelEx and their _ptsz forms, which the runtime's
-- cudaLaunchKernel goes through) the collector reads the values of the kernel's 8-byte
-- parameters (layout from cuFuncGetParamInfo; the first 16 parameters): the candidates for
-- device pointers. The analyzer keeps those that fall inside a recorded allocation
-- (memory_event) to tell which kernels share a buffer. Joins kernel rows on (pid, correlation_id).
CREATE TABLE IF NOT EXISTS kernel_arg (
  pid             INTEGER NOT NULL,
  correlation_id  INTEGER NOT NULL,
  param_index     INTEGER NOT NULL,  -- position in the kernel's parameter list, from 0
  value           INTEGER NOT NULL,  -- the 8 bytes as a signed 64-bit integer (two's complement)
  PRIMARY KEY (pid, correlation_id, param_index)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS enum_end_reason (value INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT OR IGNORE INTO enum_end_reason VALUES
  (0, 'not finalized'), (1, 'exited'), (2, 'killed by signal'), (3, 'profiler interrupted');

CREATE TABLE IF NOT EXISTS enum_memcpy_kind (value INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT OR IGNORE INTO enum_memcpy_kind VALUES
  (0, 'Unknown'), (1, 'Host-to-Device'), (2, 'Device-to-Host'), (3, 'Host-to-Array'),
  (4, 'Array-to-Host'), (5, 'Array-to-Array'), (6, 'Array-to-Device'), (7, 'Device-to-Array'),
  (8, 'Device-to-Device'), (9, 'Host-to-Host'), (10, 'Peer-to-Peer');

CREATE TABLE IF NOT EXISTS enum_memory_kind (value INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT OR IGNORE INTO enum_memory_kind VALUES
  (0, 'Unknown'), (1, 'Pageable'), (2, 'Pinned'), (3, 'Device'), (4, 'Array'),
  (5, 'Managed'), (6, 'Device static'), (7, 'Managed static');

CREATE TABLE IF NOT EXISTS enum_memory_operation (value INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT OR IGNORE INTO enum_memory_operation VALUES (1, 'allocation'), (2, 'release');

CREATE TABLE IF NOT EXISTS enum_api_domain (value INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT OR IGNORE INTO enum_api_domain VALUES (1, 'CUDA runtime'), (2, 'CUDA driver');

CREATE TABLE IF NOT EXISTS enum_sync_type (value INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT OR IGNORE INTO enum_sync_type VALUES
  (0, 'Unknown'), (1, 'Event synchronize'), (2, 'Stream wait event'),
  (3, 'Stream synchronize'), (4, 'Context synchronize');

CREATE TABLE IF NOT EXISTS enum_payload_kind (value INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT OR IGNORE INTO enum_payload_kind VALUES
  (0, 'none'), (1, 'double'), (2, 'uint64'), (3, 'int64'), (4, 'uint32'), (5, 'int32'), (6, 'float');

CREATE TABLE IF NOT EXISTS enum_overhead_kind (value INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT OR IGNORE INTO enum_overhead_kind VALUES
  (0, 'Unknown'), (1, 'Driver compiler'), (2, 'CUPTI buffer flush'), (3, 'CUPTI instrumentation'),
  (4, 'CUPTI resource'), (5, 'Runtime triggered module loading'), (6, 'Lazy function loading'),
  (7, 'Command buffer full'), (8, 'Activity buffer request'), (9, 'UVM activity init');

-- Version 4: the summary's aggregates, derived from the rows once at the end of the run
-- (prof-run, analyzer/include/fuselens/analyzer/SummaryStore.h), so that `prof-analyze summary`
-- reads a few hundred rows instead of one per kernel and launch call. A cache: readers use them
-- only while summary_source matches the tables (largest id; row counts add up) and every value
-- is plausible, and compute from the rows otherwise. Empty until stored.
CREATE TABLE IF NOT EXISTS summary_source (
  table_name  TEXT    PRIMARY KEY,  -- 'kernel', 'api_call', 'nvtx_range'
  row_count   INTEGER NOT NULL,     -- rows of the table when the aggregates were computed
  max_id      INTEGER NOT NULL      -- its largest id then (0 when empty)
);

-- Duration statistics per name: source 'kernel' groups kernels by demangled_name_id, 'api_call'
-- groups calls by name_id, 'kernel_short' (added in version 10, issue 21; absent from captures
-- stored before it, which read the rows for short names) groups kernels by short_name_id. Times in ns; median of an even count is the mean of the two middle
-- values; stddev is the sample standard deviation (n - 1), 0 for one value.
CREATE TABLE IF NOT EXISTS summary_duration (
  source     TEXT    NOT NULL,
  name_id    INTEGER NOT NULL REFERENCES strings(id),
  count      INTEGER NOT NULL,
  total_ns   INTEGER NOT NULL,
  min_ns     INTEGER NOT NULL,
  max_ns     INTEGER NOT NULL,
  median_ns  REAL    NOT NULL,
  stddev_ns  REAL    NOT NULL,
  PRIMARY KEY (source, name_id)
) WITHOUT ROWID;

-- Per ended NVTX range: the kernels launched inside it (launching call on the range's thread,
-- between its start and end) and the sum of their durations in ns.
CREATE TABLE IF NOT EXISTS summary_nvtx_work (
  range_id  INTEGER PRIMARY KEY REFERENCES nvtx_range(id),
  kernels   INTEGER NOT NULL,
  gpu_ns    INTEGER NOT NULL
);

-- Version 10: the same projection for the process (every thread of the range's process, the
-- summary's default since issue 22; NvtxProjection::Process): kernels launched by any thread of
-- the range's process between its start and end. Stored with the version-4 aggregates, under the
-- same summary_source; a capture without this table (or with it empty) computes it from the rows.
CREATE TABLE IF NOT EXISTS summary_nvtx_process (
  range_id  INTEGER PRIMARY KEY REFERENCES nvtx_range(id),
  kernels   INTEGER NOT NULL,
  gpu_ns    INTEGER NOT NULL
);

-- Version 5: how the counters of a metric_session were replayed (`prof-run --replay`,
-- `--cache-control`); a session without a row here (and every capture before version 5) used
-- kernel replay without cache control. replay 'kernel': CUPTI replays each launch `passes` times
-- inside the launch call, saving and restoring its memory; 'application': prof-run ran the
-- program once per single-pass counter group (`passes` runs), each launch profiled in one pass as
-- the program made it, and merged the runs' counters by launch order. cache_control 'all': the
-- collector wrote back and evicted the L2, and evicted the SMs' instruction caches, before each
-- profiled launch (after Nsight Compute's --cache-control all); 'none': caches as the program
-- left them.
CREATE TABLE IF NOT EXISTS metric_replay (
  pid            INTEGER NOT NULL,
  device_id      INTEGER NOT NULL,
  replay         TEXT    NOT NULL,  -- 'kernel' or 'application'
  cache_control  TEXT    NOT NULL,  -- 'all' or 'none'
  PRIMARY KEY (pid, device_id)
);

-- Version 6: the steps of the run (docs/steps.md), found by `prof-run` when the run ended with the
-- default method of `prof-analyze steps` (NVTX ranges ProfilerStep#*, *step*, *iteration*, else the
-- period of the launch sequence) and stored for SQL and DataFrame users and for the default window
-- (docs/windows.md), which reads them instead of searching again; `prof-analyze steps` recomputes
-- them (and with another method). step_detection has no row when nothing was stored, and method
-- 'none' when the search was skipped (note says why). Times in ns on CUPTI's clock, GPU work
-- projected by launch; the columns are those of analyzer/steps/Steps.h's Step and StepReport.
CREATE TABLE IF NOT EXISTS step_detection (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  method        TEXT    NOT NULL,  -- 'range', 'function', 'auto', or 'none' (not searched)
  pattern       TEXT    NOT NULL,  -- the glob or function; '' for auto
  confidence    REAL    NOT NULL,  -- 1 for markers, the period's match fraction for auto
  period        INTEGER NOT NULL,  -- auto: launches per step; else 0
  steady_first  INTEGER NOT NULL,  -- the first steady step (0: no steps)
  median_step   INTEGER NOT NULL,  -- the steady step nearest the median (0: no steps)
  note          TEXT    NOT NULL,  -- how the steps were found, or why there are none
  captured_ns   INTEGER NOT NULL,  -- first to last recorded activity
  steady_ns     INTEGER NOT NULL,  -- sum of the steady steps' wall times
  -- step times over the steady steps (ns)
  median_ns REAL NOT NULL, p10_ns REAL NOT NULL, p25_ns REAL NOT NULL, p75_ns REAL NOT NULL,
  p90_ns REAL NOT NULL, max_ns REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS step (
  id                 INTEGER PRIMARY KEY,  -- the step's 1-based index in time order
  pid                INTEGER NOT NULL,
  tid                INTEGER NOT NULL,
  start_ns           INTEGER NOT NULL,     -- the step's CPU-side window [start_ns, end_ns)
  end_ns             INTEGER NOT NULL,
  label              TEXT    NOT NULL,     -- the range text (range method), else ''
  gpu_busy_ns        INTEGER NOT NULL,     -- union of its kernels, copies and memsets
  compute_ns         INTEGER NOT NULL,     -- union of its kernels
  non_compute_ns     INTEGER NOT NULL,     -- its copies and memsets outside kernels
  span_ns            INTEGER NOT NULL,     -- the window widened to its GPU work
  idle_ns            INTEGER NOT NULL,     -- span - compute - non-compute
  host_wait_ns       INTEGER NOT NULL,     -- HTA's idle breakdown of the stream gaps
  kernel_wait_ns     INTEGER NOT NULL,
  other_wait_ns      INTEGER NOT NULL,
  launches           INTEGER NOT NULL,
  kernels            INTEGER NOT NULL,
  copies             INTEGER NOT NULL,
  memsets            INTEGER NOT NULL,
  syncs              INTEGER NOT NULL,
  allocations        INTEGER NOT NULL,
  peak_memory_bytes  INTEGER NOT NULL,
  top_kernel         TEXT    NOT NULL,     -- the kernel with the most GPU time, '' without
  top_kernel_ns      INTEGER NOT NULL,
  outlier_reason     TEXT,                 -- NULL unless an outlier step: why
  outlier_differs    TEXT                  -- and what differs from the median step
);

-- Version 6: the spans each process recorded under prof-run's capture control (--capture-range
-- nvtx:NAME[@DOMAIN] | cudaProfilerApi, --delay/--duration, --steps; docs/capture-control.md).
-- No rows: the whole run was recorded. Outside these spans the collector recorded nothing.
CREATE TABLE IF NOT EXISTS capture_window (
  id        INTEGER PRIMARY KEY,
  pid       INTEGER NOT NULL,
  start_ns  INTEGER NOT NULL,  -- CUPTI ns when recording began
  end_ns    INTEGER,           -- when it stopped; NULL when the process ended inside the window
  reason    TEXT    NOT NULL   -- 'nvtx:NAME', 'cudaProfilerApi', 'time', 'steps'
);

-- Version 10: results of `prof-analyze cct` and `prof-analyze flags` computed once at the end of the
-- run (prof-run, after the steps; analyzer/store/AnalysisStore.h) for the default window
-- ('steady'), so that both answer on ten million kernels without reading every launch. A cache
-- like the summary's aggregates: readers use a result only while stored_analysis_source matches
-- the tables (largest rowid of each table, row count of the WITHOUT ROWID ones), the window they
-- resolve now has the same key, and the body parses and passes every plausibility check;
-- otherwise they compute from the rows. Empty until stored.
CREATE TABLE IF NOT EXISTS stored_analysis_source (
  table_name   TEXT    PRIMARY KEY,  -- a table the results were computed from
  fingerprint  INTEGER NOT NULL      -- its largest rowid then (row count when WITHOUT ROWID); 0 absent
);

CREATE TABLE IF NOT EXISTS stored_analysis (
  analysis     TEXT    NOT NULL,  -- 'cct': the GPU operations grouped by calling context, label and
                                  -- phase; 'flags': the report of the default rules and thresholds
  window_spec  TEXT    NOT NULL,  -- the --window it answers ('steady', the default)
  window_key   TEXT    NOT NULL,  -- the window as resolved then (JSON: label, description, intervals)
  body         TEXT    NOT NULL,  -- the result, JSON (analyzer/store/AnalysisStore.h)
  PRIMARY KEY (analysis, window_spec)
);

-- Version 10: the timeline's level of detail (prof-gui; analyzer/timeline/TimelineLod.h), derived
-- from the rows once when the capture is finalized, so that a zoomed-out timeline of ten million
-- kernels draws without reading them. Per row of a timeline lane (a GPU lane: device, stream,
-- pid; a CUDA API lane: pid, tid and nesting depth) and per level, the time its items cover in
-- each bucket of bucket_ns. A cache: readers use it only while timeline_lod_source matches the
-- tables (largest id) and every row is plausible, and load the rows otherwise. Empty until stored.
CREATE TABLE IF NOT EXISTS timeline_lod_source (
  table_name  TEXT    PRIMARY KEY,  -- 'kernel', 'memcpy', 'memset', 'api_call'
  max_id      INTEGER NOT NULL      -- its largest id when the level of detail was computed
);

CREATE TABLE IF NOT EXISTS timeline_lod (
  lane_kind        INTEGER NOT NULL,  -- 0: GPU lane (tid, depth 0); 2: CUDA API lane (device, stream 0)
  device_id        INTEGER NOT NULL,
  stream_id        INTEGER NOT NULL,
  pid              INTEGER NOT NULL,
  tid              INTEGER NOT NULL,
  depth            INTEGER NOT NULL,  -- API lanes: nesting depth of the calls (0 = outermost)
  level            INTEGER NOT NULL,  -- 0 = finest; each level's buckets are 8 of the one below
  begin_ns         INTEGER NOT NULL,  -- start of bucket 0: the capture's first timestamp
  bucket_ns        INTEGER NOT NULL,  -- width of every bucket (ns)
  item_count       INTEGER NOT NULL,  -- items of the row
  first_ns         INTEGER NOT NULL,  -- earliest start of its items
  last_ns          INTEGER NOT NULL,  -- latest end of its items
  max_duration_ns  INTEGER NOT NULL,  -- its longest item
  busy             BLOB    NOT NULL,  -- per bucket, little-endian int64: ns its items cover
  starts           BLOB    NOT NULL,  -- per bucket, little-endian int64: items starting in it
  PRIMARY KEY (lane_kind, device_id, stream_id, pid, tid, depth, level)
) WITHOUT ROWID;

-- Version 10: aggregate mode (`prof-run --mode aggregate`, docs/aggregate.md): the statistics of
-- the whole run per distinct context, computed by the collector's writer thread
-- (db/include/fuselens/db/Aggregate.h); the activity tables then hold only the records of the
-- capture windows (capture_window; none without --steps, --capture-range or --delay/--duration).
-- A capture is an aggregate capture when aggregate_process has rows. Times in ns, sizes in bytes.
-- *_sketch: a DDSketch of the values (relative accuracy sketch_alpha), in the binary form that
-- db/include/fuselens/db/DDSketch.h documents ("DDS1", alpha, bins, zero count, min, max, first
-- index, bucket counts; little-endian).
CREATE TABLE IF NOT EXISTS aggregate_process (
  pid              INTEGER PRIMARY KEY,
  kernels          INTEGER NOT NULL,  -- kernel records aggregated
  copies           INTEGER NOT NULL,
  memsets          INTEGER NOT NULL,
  memory_events    INTEGER NOT NULL,
  traced           INTEGER NOT NULL,  -- records also stored as trace rows (inside windows)
  without_context  INTEGER NOT NULL,  -- kernels, copies, memsets with no calling context
  sketch_alpha     REAL    NOT NULL   -- relative accuracy of the sketches (0.01)
);

-- Per process, calling-context node, device, kernel and launch configuration. GPU time =
-- end_ns - start_ns of each launch; launch latency = kernel start - start of its API call (the
-- earliest of the same correlation id), for the launches whose call was recorded.
CREATE TABLE IF NOT EXISTS aggregate_kernel (
  id                    INTEGER PRIMARY KEY,
  pid                   INTEGER NOT NULL,
  cct_node_id           INTEGER REFERENCES cct_node(id),  -- NULL: no calling context
  device_id             INTEGER NOT NULL,
  short_name_id         INTEGER NOT NULL REFERENCES strings(id),
  demangled_name_id     INTEGER NOT NULL REFERENCES strings(id),
  mangled_name_id       INTEGER NOT NULL REFERENCES strings(id),
  grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,
  block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,
  static_shared_bytes   INTEGER NOT NULL,
  dynamic_shared_bytes  INTEGER NOT NULL,
  count                 INTEGER NOT NULL,
  total_ns              INTEGER NOT NULL,
  min_ns                INTEGER NOT NULL,
  max_ns                INTEGER NOT NULL,
  sketch                BLOB    NOT NULL,
  latency_count         INTEGER NOT NULL,  -- <= count
  latency_total_ns      INTEGER NOT NULL,
  latency_min_ns        INTEGER NOT NULL,
  latency_max_ns        INTEGER NOT NULL,
  latency_sketch        BLOB    NOT NULL
);

-- Copies (operation 1: copy_kind, src_kind, dst_kind) and memsets (operation 2: src_kind is the
-- memory kind; copy_kind and dst_kind 0) per process, node, device and kind.
CREATE TABLE IF NOT EXISTS aggregate_transfer (
  id           INTEGER PRIMARY KEY,
  pid          INTEGER NOT NULL,
  cct_node_id  INTEGER REFERENCES cct_node(id),
  device_id    INTEGER NOT NULL,
  operation    INTEGER NOT NULL,  -- 1 memcpy, 2 memset
  copy_kind    INTEGER NOT NULL,  -- enum_memcpy_kind
  src_kind     INTEGER NOT NULL,  -- enum_memory_kind
  dst_kind     INTEGER NOT NULL,  -- enum_memory_kind
  count        INTEGER NOT NULL,
  bytes        INTEGER NOT NULL,
  total_ns     INTEGER NOT NULL,
  min_ns       INTEGER NOT NULL,
  max_ns       INTEGER NOT NULL
);

-- Device memory per process, device and CUDA context: the running sum of allocated bytes
-- (+ per allocation, - per release, clipped at 0) in the order the records arrived.
CREATE TABLE IF NOT EXISTS aggregate_memory (
  pid              INTEGER NOT NULL,
  device_id        INTEGER NOT NULL,
  context_id       INTEGER NOT NULL,
  allocations      INTEGER NOT NULL,
  releases         INTEGER NOT NULL,
  allocated_bytes  INTEGER NOT NULL,
  peak_bytes       INTEGER NOT NULL,
  final_bytes      INTEGER NOT NULL,
  PRIMARY KEY (pid, device_id, context_id)
);

-- Version 10: sampled tracing (prof-run --sample 1/N; docs/capture-control.md, "Sampled
-- tracing"). One row per process that sampled; no rows: nothing was sampled, the activity tables
-- hold every launch of the windows they cover. A sampled process traced (activity on) step k of
-- its step ranges when k % every = every - 1, and counted the launch calls of every step from
-- CUPTI's callbacks, traced or not (sample_step, sample_step_api).
CREATE TABLE IF NOT EXISTS sampling (
  pid         INTEGER PRIMARY KEY,
  every       INTEGER NOT NULL,  -- N of --sample 1/N
  steps       INTEGER NOT NULL,  -- step ranges seen by the collector
  steps_lost  INTEGER NOT NULL   -- of them, beyond the collector's step log: not in sample_step
);

-- Every step of a sampled process (0-based index in the order its step ranges began), CUPTI ns
-- taken in the NVTX callbacks of the range's push and pop.
CREATE TABLE IF NOT EXISTS sample_step (
  pid       INTEGER NOT NULL,
  step      INTEGER NOT NULL,
  start_ns  INTEGER NOT NULL,
  end_ns    INTEGER,            -- NULL: the process ended inside the step
  traced    INTEGER NOT NULL,   -- 1: activity was recorded in this step
  PRIMARY KEY (pid, step)
);

-- The launch calls (kernel launches, graph launches, copies, memsets: the driver API functions
-- whose names start with cuLaunch, cuGraphLaunch, cuMemcpy, cuMemset) each step made, counted at
-- API entry on every thread of the process while the step was open; one row per API function
-- called in the step.
CREATE TABLE IF NOT EXISTS sample_step_api (
  pid      INTEGER NOT NULL,
  step     INTEGER NOT NULL,
  api_id   INTEGER NOT NULL,    -- strings: the driver API function ('cuLaunchKernel')
  calls    INTEGER NOT NULL,
  PRIMARY KEY (pid, step, api_id)
);

-- Version 10: the lean trace layout (`prof-run --layout lean`, issue 21; docs/BENCHMARKS.md,
-- "Capture size and writer throughput"). Every version-10 capture has these four tables; they hold
-- rows only in a lean capture, which has no `kernel` and `api_call` tables but views of those
-- names over these (db/src/Layout.cpp, the same definitions readers use) giving every column of
-- the version-9 tables with the same values. What repeats is interned: a kernel_config row is a
-- process's kernel launched with one launch configuration on one stream, an api_config row a
-- thread's call of one API with one return code. Times are stored as
-- start_ns = true start - config base_ns, and duration_ns = end - start; a new config row (same
-- fields, new base) is started when a start would lie 2^31 ns or more from its config's base, so
-- that both fit 4 bytes. correlation_delta = correlation id - the row's id (0 bytes when they
-- advance together, as in a launch loop). No indexes: analyses sort what they need.
CREATE TABLE IF NOT EXISTS kernel_config (
  id                    INTEGER PRIMARY KEY,
  pid                   INTEGER NOT NULL,
  base_ns               INTEGER NOT NULL,
  device_id             INTEGER NOT NULL,
  context_id            INTEGER NOT NULL,
  stream_id             INTEGER NOT NULL,
  grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,
  block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,
  registers_per_thread  INTEGER NOT NULL,
  static_shared_bytes   INTEGER NOT NULL,
  dynamic_shared_bytes  INTEGER NOT NULL,
  local_memory_per_thread INTEGER NOT NULL,
  short_name_id         INTEGER NOT NULL REFERENCES strings(id),
  demangled_name_id     INTEGER NOT NULL REFERENCES strings(id),
  mangled_name_id       INTEGER NOT NULL REFERENCES strings(id)
);

CREATE TABLE IF NOT EXISTS kernel_lean (
  id                 INTEGER PRIMARY KEY,
  config_id          INTEGER NOT NULL REFERENCES kernel_config(id),
  correlation_delta  INTEGER NOT NULL,  -- correlation_id - id
  start_ns           INTEGER NOT NULL,  -- start - kernel_config.base_ns
  duration_ns        INTEGER NOT NULL,  -- end - start
  graph_id           INTEGER,
  graph_node_id      INTEGER
);

CREATE TABLE IF NOT EXISTS api_config (
  id           INTEGER PRIMARY KEY,
  pid          INTEGER NOT NULL,
  base_ns      INTEGER NOT NULL,
  tid          INTEGER NOT NULL,
  domain       INTEGER NOT NULL,  -- enum_api_domain
  callback_id  INTEGER NOT NULL,
  name_id      INTEGER NOT NULL REFERENCES strings(id),
  return_code  INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS api_call_lean (
  id                 INTEGER PRIMARY KEY,
  config_id          INTEGER NOT NULL REFERENCES api_config(id),
  correlation_delta  INTEGER NOT NULL,  -- correlation_id - id
  start_ns           INTEGER NOT NULL,  -- start - api_config.base_ns
  duration_ns        INTEGER NOT NULL   -- end - start
);

-- Views: the activity tables with names joined and durations computed, for `sqlite3` and
-- DataFrame users (docs/python.md; the Python package `python/fuselens` reads them). Created
-- with every new capture; they add no data and change no table, so the schema version stays as it is.
-- Readers accept exactly these view names in a capture (db/src/Reader.cpp) and never read them;
-- the Python package creates the same views as TEMP views on its own connection (from this file),
-- so captures written before the views existed, and read-only files, read the same way.
-- Durations are end_ns - start_ns in ns (NULL for an NVTX range never ended); a name whose
-- string id is missing reads as NULL; an enumeration value without a name reads as 'Unknown'.
-- A kernel's `name` is its demangled name (what `prof-analyze summary` groups by); a copy's is
-- the summary's '[CUDA memcpy KIND]', a memset's '[CUDA memset]'.
CREATE VIEW IF NOT EXISTS kernel_v AS
SELECT k.id, k.pid, k.device_id, k.context_id, k.stream_id, k.correlation_id, k.start_ns,
       k.end_ns, k.end_ns - k.start_ns AS duration_ns, dn.value AS name, sn.value AS short_name,
       mn.value AS mangled_name, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
       k.registers_per_thread, k.static_shared_bytes, k.dynamic_shared_bytes,
       k.local_memory_per_thread, k.graph_id, k.graph_node_id
FROM kernel k
LEFT JOIN strings dn ON dn.id = k.demangled_name_id
LEFT JOIN strings sn ON sn.id = k.short_name_id
LEFT JOIN strings mn ON mn.id = k.mangled_name_id;

CREATE VIEW IF NOT EXISTS memcpy_v AS
SELECT c.id, c.pid, c.device_id, c.context_id, c.stream_id, c.correlation_id, c.start_ns,
       c.end_ns, c.end_ns - c.start_ns AS duration_ns,
       '[CUDA memcpy ' || COALESCE(ck.name, 'Unknown') || ']' AS name,
       COALESCE(ck.name, 'Unknown') AS copy_kind, COALESCE(sk.name, 'Unknown') AS src_kind,
       COALESCE(dk.name, 'Unknown') AS dst_kind, c.bytes, c.is_async, c.graph_id, c.graph_node_id
FROM memcpy c
LEFT JOIN enum_memcpy_kind ck ON ck.value = c.copy_kind
LEFT JOIN enum_memory_kind sk ON sk.value = c.src_kind
LEFT JOIN enum_memory_kind dk ON dk.value = c.dst_kind;

CREATE VIEW IF NOT EXISTS memset_v AS
SELECT s.id, s.pid, s.device_id, s.context_id, s.stream_id, s.correlation_id, s.start_ns,
       s.end_ns, s.end_ns - s.start_ns AS duration_ns, '[CUDA memset]' AS name,
       COALESCE(mk.name, 'Unknown') AS memory_kind, s.bytes, s.value, s.is_async, s.graph_id,
       s.graph_node_id
FROM memset s
LEFT JOIN enum_memory_kind mk ON mk.value = s.memory_kind;

CREATE VIEW IF NOT EXISTS memory_event_v AS
SELECT m.id, m.pid, m.timestamp_ns, COALESCE(op.name, 'Unknown') AS operation,
       COALESCE(mk.name, 'Unknown') AS memory_kind, m.address, m.bytes, m.device_id,
       m.context_id, m.stream_id, m.correlation_id, m.is_async
FROM memory_event m
LEFT JOIN enum_memory_operation op ON op.value = m.operation
LEFT JOIN enum_memory_kind mk ON mk.value = m.memory_kind;

CREATE VIEW IF NOT EXISTS api_call_v AS
SELECT a.id, a.pid, a.tid, COALESCE(d.name, 'Unknown') AS domain, a.callback_id,
       n.value AS name, a.start_ns, a.end_ns, a.end_ns - a.start_ns AS duration_ns,
       a.correlation_id, a.return_code
FROM api_call a
LEFT JOIN enum_api_domain d ON d.value = a.domain
LEFT JOIN strings n ON n.id = a.name_id;

CREATE VIEW IF NOT EXISTS nvtx_range_v AS
SELECT r.id, r.pid, r.tid, d.value AS domain, t.value AS name, r.start_ns, r.end_ns,
       r.end_ns - r.start_ns AS duration_ns, r.depth, r.category, r.color,
       COALESCE(pk.name, 'Unknown') AS payload_kind, r.payload
FROM nvtx_range r
LEFT JOIN strings d ON d.id = r.domain_id
LEFT JOIN strings t ON t.id = r.text_id
LEFT JOIN enum_payload_kind pk ON pk.value = r.payload_kind;

CREATE VIEW IF NOT EXISTS nvtx_mark_v AS
SELECT m.id, m.pid, m.tid, d.value AS domain, t.value AS name, m.timestamp_ns, m.category,
       m.color, COALESCE(pk.name, 'Unknown') AS payload_kind, m.payload
FROM nvtx_mark m
LEFT JOIN strings d ON d.id = m.domain_id
LEFT JOIN strings t ON t.id = m.text_id
LEFT JOIN enum_payload_kind pk ON pk.value = m.payload_kind;

CREATE VIEW IF NOT EXISTS sync_event_v AS
SELECT s.id, s.pid, s.start_ns, s.end_ns, s.end_ns - s.start_ns AS duration_ns,
       COALESCE(st.name, 'Unknown') AS sync_type, s.context_id, s.stream_id, s.cuda_event_id,
       s.correlation_id
FROM sync_event s
LEFT JOIN enum_sync_type st ON st.value = s.sync_type;

-- The steps stored at the end of the run (version 6; empty before), with their CPU-side wall time
-- and whether each is steady (from step_detection.steady_first on; docs/windows.md, "The steady
-- rule"; NULL without a step_detection row).
CREATE VIEW IF NOT EXISTS step_v AS
SELECT s.*, s.end_ns - s.start_ns AS duration_ns,
       s.id >= (SELECT d.steady_first FROM step_detection d WHERE d.id = 1) AS steady
FROM step s;

-- Each process with where it ran: host_name from process_rank (version 8), else from the merge
-- (merge_source), else the run's host; rank columns NULL without a launcher's rank.
CREATE VIEW IF NOT EXISTS process_v AS
SELECT p.pid, p.parent_pid, p.executable,
       COALESCE(r.host_name, m.host_name, (SELECT host_name FROM run WHERE id = 1)) AS host_name,
       r.rank, r.local_rank, r.world_size, r.local_world_size, r.launcher,
       m.input_index AS merge_input, p.start_utc_ns, p.end_utc_ns, p.clock_offset_ns,
       p.cuda_driver_version, p.cuda_runtime_version, p.cupti_version, p.dropped_records
FROM process p
LEFT JOIN process_rank r ON r.pid = p.pid
LEFT JOIN merge_source m ON m.pid = p.pid;

-- Frames with their names and the label the calling-context views print
-- (analyzer/cct/CallingContext.h, frame_label): "function [file:line]", or "module+0xoffset"
-- without a symbol; a module frame (kind 'module') is "<nn.Module> NAME". internal is 1 for the
-- frames `prof-analyze cct` hides by default: native frames of the CUDA stack, the unwinder and
-- FuseLens's collector (libcuda.so, libcudart.so, libcupti.so, libunwind.so,
-- libfuselens_collector.so*) and module frames.
CREATE VIEW IF NOT EXISTS frame_v AS
WITH named AS (
  SELECT f.id, f.kind, f.module_offset, f.line, mo.value AS module, fn.value AS function,
         fi.value AS file,
         replace(mo.value, rtrim(mo.value, replace(mo.value, '/', '')), '') AS module_base,
         replace(fi.value, rtrim(fi.value, replace(fi.value, '/', '')), '') AS file_base
  FROM frame f
  LEFT JOIN strings mo ON mo.id = f.module_id
  LEFT JOIN strings fn ON fn.id = f.function_id
  LEFT JOIN strings fi ON fi.id = f.file_id
)
SELECT n.id, COALESCE(fk.name, 'Unknown') AS kind, n.module, n.module_offset, n.function, n.file,
       n.line,
       CASE WHEN n.kind = 3 THEN '<nn.Module> ' || COALESCE(n.function, '')
            ELSE COALESCE(NULLIF(n.function, ''),
                          COALESCE(NULLIF(n.module_base, ''), '<unknown>')
                          || printf('+0x%x', COALESCE(n.module_offset, 0)))
                 || CASE WHEN n.file <> '' AND n.line > 0
                         THEN ' [' || n.file_base || ':' || n.line || ']' ELSE '' END
       END AS label,
       CASE WHEN n.kind = 3 THEN 1
            WHEN n.kind = 2 THEN 0
            WHEN substr(n.module_base, 1, 10) = 'libcuda.so'
              OR substr(n.module_base, 1, 12) = 'libcudart.so'
              OR substr(n.module_base, 1, 11) = 'libcupti.so'
              OR substr(n.module_base, 1, 12) = 'libunwind.so'
              OR substr(n.module_base, 1, 24) = 'libfuselens_collector.so' THEN 1
            ELSE 0 END AS internal
FROM named n
LEFT JOIN enum_frame_kind fk ON fk.value = n.kind;

-- Every calling-context-tree node with its path from the process's root, outermost frame first,
-- frame labels joined with ' > ' (a label may itself hold '>': split on frames with parent_id
-- instead), without the internal frames (as `prof-analyze cct` shows it; walk parent_id for all
-- of them); site is the innermost frame that is not internal (the launch site of a launching
-- call). Nodes not reachable from a root, and paths deeper than 4096, are left out. Cost: the
-- whole tree is walked for any query of this view (about 1 s for 10,000 nodes of PyTorch paths).
CREATE VIEW IF NOT EXISTS cct_path_v AS
WITH RECURSIVE walk(id, pid, parent_id, frame_id, depth, label, internal, site, path) AS (
  SELECT n.id, n.pid, NULL, NULL, 0, '<root>', 0, NULL, '' FROM cct_node n
  WHERE n.parent_id IS NULL
  UNION ALL
  SELECT n.id, n.pid, n.parent_id, n.frame_id, w.depth + 1, COALESCE(f.label, '<unknown>'),
         COALESCE(f.internal, 0),
         CASE WHEN COALESCE(f.internal, 0) = 0 THEN COALESCE(f.label, '<unknown>') ELSE w.site END,
         CASE WHEN COALESCE(f.internal, 0) = 1 THEN w.path
              WHEN w.path = '' THEN COALESCE(f.label, '<unknown>')
              ELSE w.path || ' > ' || COALESCE(f.label, '<unknown>') END
  FROM cct_node n
  JOIN walk w ON n.parent_id = w.id
  LEFT JOIN frame_v f ON f.id = n.frame_id
  WHERE w.depth < 4096
)
SELECT id, pid, parent_id, frame_id, depth, label, internal, site, path FROM walk;

-- The calling context of each traced API call (and so of the kernel, copy or memset it launched:
-- join on pid and correlation_id): its node, the launch site and the path of cct_path_v.
CREATE VIEW IF NOT EXISTS api_context_v AS
SELECT c.pid, c.correlation_id, c.tid, c.cct_node_id, p.depth, p.site, p.path
FROM api_context c
LEFT JOIN cct_path_v p ON p.id = c.cct_node_id;
