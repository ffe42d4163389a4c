"""The Chrome trace export read by a real client: Holistic Trace Analysis (HTA, PyPI
HolisticTraceAnalysis, installed by scripts/setup.sh from tests/python/requirements-hta.txt).

Each case exports committed H100/H200 captures with `prof-analyze export --format chrome-trace`
into a directory of per-rank `.json.gz` files, loads it with `hta.trace_analysis.TraceAnalysis`,
and checks HTA's view against `prof-analyze summary --format json` of the same capture and window:
the same kernels, instance count and total time per kernel name (HTA's microseconds within
rounding of the nanoseconds), and that HTA's launch statistics run and pair every launch.
HTA_DISABLE_NS_ROUNDING=1: HTA otherwise rounds each event inward to whole microseconds, as it
does with the PyTorch profiler's nanosecond traces (docs/export.md).

Usage: python3 test_hta_chrome_trace.py PROF_ANALYZE DATA_DIR (ctest passes both). Exits 77
(ctest: skipped) with the reason when HTA cannot be imported.
"""

import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

warnings.filterwarnings("ignore", module=r"hta(\.|$)")  # HTA 0.5.0's pandas deprecation notes
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"  # read by HTA when it parses

PROF_ANALYZE = None
DATA_DIR = None
LAUNCH_CALLS = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync"}


def run(*args):
    done = subprocess.run([PROF_ANALYZE, *args], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"prof-analyze {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def summary_kernels(capture):
    """{kernel name: (instances, total ns)} of prof-analyze summary, default (steady) window."""
    doc = json.loads(run("summary", capture, "--format", "json", "--section", "kernels"))
    return {row["name"]: (row["instances"], row["total_ns"]) for row in doc["kernels"]}


def hta_kernels(analysis, rank):
    """{kernel name: (instances, total µs)} of HTA's parsed trace of `rank` (category "kernel")."""
    df = analysis.t.get_trace(rank)
    symbols = analysis.t.symbol_table.get_sym_table()
    kernel_cat = analysis.t.symbol_table.get_sym_id_map()["kernel"]
    out = collections.defaultdict(lambda: [0, 0.0])
    for name_id, dur in zip(df.loc[df["cat"] == kernel_cat, "name"],
                            df.loc[df["cat"] == kernel_cat, "dur"]):
        entry = out[symbols[name_id]]
        entry[0] += 1
        entry[1] += float(dur)
    return {name: tuple(v) for name, v in out.items()}


def load_trace(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def expected_launch_pairs(trace):
    """Correlation ids whose launching call is one HTA's launch statistics pair with GPU work."""
    calls = {e["args"]["correlation"] for e in trace["traceEvents"]
             if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"
             and e["name"] in LAUNCH_CALLS}
    gpu = [e["args"]["correlation"] for e in trace["traceEvents"]
           if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    return sum(1 for c in gpu if c in calls)


class HtaReadsTheExport(unittest.TestCase):
    def assert_same_kernels(self, hta, summary):
        self.assertEqual(sorted(hta), sorted(summary))
        for name, (count, total_us) in hta.items():
            want_count, want_ns = summary[name]
            self.assertEqual(count, want_count, name)
            # Three decimals of µs are exact ns; the float sum may lose a fraction of a ns.
            self.assertAlmostEqual(total_us * 1000.0, want_ns, delta=0.01 * count, msg=name)

    def test_training_steps_match_the_summary_and_launch_stats_run(self):
        from hta.trace_analysis import TraceAnalysis

        capture = os.path.join(DATA_DIR, "train_steps.sqlite")  # H100, ProfilerStep#N ranges
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rank0.json.gz")
            run("export", capture, "--format", "chrome-trace", "-o", path)
            trace = load_trace(path)
            self.assertEqual(trace["distributedInfo"]["rank"], 0)
            self.assertEqual(trace["deviceProperties"][0]["name"], "NVIDIA H100 80GB HBM3")
            # The ProfilerStep#N ranges make HTA's iterations; it keeps the last step's kernels
            # only when asked.
            analysis = TraceAnalysis(trace_dir=tmp, include_last_profiler_step=True)
            self.assertEqual(analysis.t.get_ranks(), [0])
            self.assertGreater(len(analysis.t.get_iterations(0)), 10)
            hta = hta_kernels(analysis, 0)
            summary = summary_kernels(capture)
            self.assertGreater(sum(c for c, _ in summary.values()), 1000)
            self.assert_same_kernels(hta, summary)

            stats = analysis.get_cuda_kernel_launch_stats(ranks=[0], visualize=False)[0]
            self.assertEqual(len(stats), expected_launch_pairs(trace))
            self.assertGreater(len(stats), 1000)
            self.assertTrue((stats["launch_delay"] >= 0).all())
            self.assertTrue((stats["cpu_duration"] > 0).all())
            self.assertTrue((stats["gpu_duration"] >= 0).all())

    def test_one_file_per_rank_makes_hta_ranks(self):
        from hta.trace_analysis import TraceAnalysis

        capture = os.path.join(DATA_DIR, "ddp_2rank.sqlite")  # 2x H200, DDP over NCCL
        with tempfile.TemporaryDirectory() as tmp:
            for rank in (0, 1):
                run("export", capture, "--format", "chrome-trace", "--rank", str(rank), "-o",
                    os.path.join(tmp, f"rank{rank}.json.gz"))
            analysis = TraceAnalysis(trace_dir=tmp)
            self.assertEqual(analysis.t.get_ranks(), [0, 1])
            total = collections.defaultdict(lambda: [0, 0.0])
            for rank in (0, 1):
                per_rank = hta_kernels(analysis, rank)
                self.assertTrue(any(n.startswith("ncclDevKernel_AllReduce") for n in per_rank))
                for name, (count, us) in per_rank.items():
                    total[name][0] += count
                    total[name][1] += us
            self.assert_same_kernels({n: tuple(v) for n, v in total.items()},
                                     summary_kernels(capture))
            stats = analysis.get_cuda_kernel_launch_stats(ranks=[0, 1], visualize=False)
            self.assertEqual(sorted(stats), [0, 1])
            self.assertTrue(all(len(df) > 0 for df in stats.values()))


def main():
    global PROF_ANALYZE, DATA_DIR
    if len(sys.argv) < 3:
        print("usage: test_hta_chrome_trace.py PROF_ANALYZE DATA_DIR", file=sys.stderr)
        return 2
    PROF_ANALYZE, DATA_DIR = sys.argv[1], sys.argv[2]
    try:
        import hta.trace_analysis  # noqa: F401
    except Exception as e:  # ImportError, or a dependency of HTA failing to import
        print(f"SKIPPED: Holistic Trace Analysis is not importable ({e!r}); "
              "scripts/setup.sh installs tests/python/requirements-hta.txt")
        return 77
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
