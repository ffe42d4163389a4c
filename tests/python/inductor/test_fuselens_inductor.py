"""Tests of fuselens_inductor's parsing (no torch needed): the wrapper parser on a fixture of
Inductor output code, stack-trace and module-path reading, and the marks it builds."""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("FUSELENS_PYTHON_DIR",
                                  os.path.join(HERE, "..", "..", "..", "tools", "prof-run", "python")))

import fuselens_inductor as fi  # noqa: E402


def fixture():
    with open(os.path.join(HERE, "fixture_forward_wrapper.py.txt"), encoding="utf-8") as f:
        return f.read()


class ParseWrapper(unittest.TestCase):
    def setUp(self):
        self.parsed = fi.parse_wrapper(fixture())
        self.by_name = {k["kernel"]: k for k in self.parsed["kernels"]}

    def test_reads_the_aot_id(self):
        self.assertEqual(self.parsed["graph"], "0_forward")

    def test_triton_kernels_carry_original_aten_and_source_nodes(self):
        k = self.by_name["triton_per_fused_native_layer_norm_relu_0"]
        self.assertEqual(k["kind"], "triton")
        self.assertEqual(k["ops"], ["relu", "native_layer_norm"])
        self.assertEqual(k["source_nodes"], ["relu", "y"])
        self.assertEqual(k["mapping"]["y"], ["add_1", "mul", "mul_1", "rsqrt", "sub", "var_mean"])

    def test_comments_inside_kernel_source_are_not_read(self):
        k = self.by_name["triton_per_fused_native_layer_norm_relu_0"]
        self.assertNotIn("not", k["source_nodes"])

    def test_launch_sites_are_the_run_lines_of_call(self):
        lines = fixture().splitlines()
        k = self.by_name["triton_poi_fused_add_1"]
        self.assertEqual(len(k["sites"]), 1)
        self.assertIn("triton_poi_fused_add_1.run(", lines[k["sites"][0] - 1])

    def test_extern_calls_in_call_order_with_their_comment(self):
        extern = [k for k in self.parsed["kernels"] if k["kind"] == "extern"]
        self.assertEqual([k["kernel"] for k in extern], ["extern_kernels.addmm", "extern_kernels.mm"])
        self.assertEqual(extern[0]["ops"], ["addmm"])
        self.assertEqual(extern[0]["source_nodes"], ["linear"])
        self.assertEqual(extern[1]["source_nodes"], ["scores"])

    def test_odd_text_yields_nothing_and_does_not_raise(self):
        self.assertEqual(fi.parse_wrapper("")["kernels"], [])
        self.assertEqual(fi.parse_wrapper("x = '''\n# Source Nodes: [a], Original ATen: [b]\n")["kernels"], [])
        self.assertEqual(fi.parse_wrapper("# Topologically Sorted Source Nodes: [a], Original ATen: [aten.b]\n"
                                          "extern_kernels.mm(a, b)\n")["kernels"][0]["ops"], ["b"])


class Frames(unittest.TestCase):
    def test_innermost_frame_of_a_stack_trace(self):
        trace = ('  File "/w/model.py", line 52, in forward\n    x = self.block(x)\n'
                 '  File "/w/model.py", line 39, in forward\n    return F.relu(self.fc(x))\n')
        self.assertEqual(fi.innermost_frame(trace), ("/w/model.py", 39))
        self.assertIsNone(fi.innermost_frame(None))
        self.assertIsNone(fi.innermost_frame("no frames"))

    def test_module_paths_as_the_module_view_spells_them(self):
        stack = {"a": ("L['self'].encoder", object), "b": ("L['self'].encoder.layers[3].attn", object)}
        self.assertEqual(fi.module_path(stack), "encoder.layers.3.attn")
        self.assertEqual(fi.module_path({"a": ("L['self']", object)}), "")
        self.assertEqual(fi.module_path(None), "")


class Marks(unittest.TestCase):
    def test_one_mark_per_kernel_with_lines_and_site(self):
        parsed = fi.parse_wrapper(fixture())
        texts = fi.marks(parsed, "/tmp/w.py", {"relu": {"line": "/w/model.py:40", "module": "block"}})
        self.assertEqual(len(texts), len(parsed["kernels"]))
        docs = [json.loads(t[len(fi.MARK_PREFIX):]) for t in texts]
        for t in texts:
            self.assertTrue(t.startswith("fuselens:inductor:"))
        ln = [d for d in docs if d["kernel"] == "triton_per_fused_native_layer_norm_relu_0"][0]
        self.assertEqual(ln["graph"], "0_forward")
        self.assertEqual(ln["nodes"][0], {"name": "relu", "line": "/w/model.py:40", "module": "block"})
        self.assertEqual(ln["nodes"][1], {"name": "y"})
        self.assertTrue(ln["site"].startswith("/tmp/w.py:"))

    def test_site_lines_come_from_the_linemap_entry_above_the_site(self):
        parsed = fi.parse_wrapper(fixture())
        site = [k for k in parsed["kernels"] if k["kernel"] == "triton_poi_fused_add_1"][0]["sites"][0]
        linemap = [(site - 30, '  File "/w/model.py", line 10, in forward\n    x = self.fc(x)\n'),
                   (site - 2, '  File "/w/model.py", line 13, in forward\n    y = y + r\n'),
                   (site + 5, '  File "/w/model.py", line 14, in forward\n'),
                   ("bad",), (site - 1, None)]
        self.assertEqual(fi.site_lines([site], linemap), [])  # the entry just above has no trace
        self.assertEqual(fi.site_lines([site], linemap[:3]), ["/w/model.py:13"])
        texts = fi.marks(parsed, "/tmp/w.py", {}, linemap[:3])
        doc = [json.loads(t[len(fi.MARK_PREFIX):]) for t in texts
               if "triton_poi_fused_add_1" in t][0]
        self.assertEqual(doc["lines"], ["/w/model.py:13"])
        self.assertEqual(fi.site_lines([site], None), [])

    def test_long_marks_are_cut_and_say_so(self):
        parsed = {"graph": "1_backward", "kernels": [{"kernel": "k", "kind": "triton", "ops": ["o"] * 10,
                                                      "source_nodes": ["n%d" % i for i in range(2000)],
                                                      "mapping": {}, "sites": []}]}
        text = fi.marks(parsed, "w.py", {})[0]
        self.assertLessEqual(len(text), fi._MAX_MARK)
        self.assertTrue(json.loads(text[len(fi.MARK_PREFIX):])["truncated"])


class FakeTorch:
    """Just enough of torch for install(): cuda, nvtx marks, torch.compile, and the two Inductor
    modules it hooks (PyCodeCache.load_by_key_path as a classmethod, compile_fx)."""

    def __init__(self):
        import types
        self.marks = []
        fake = self

        class Nvtx:
            @staticmethod
            def mark(text):
                fake.marks.append(text)

        class Cuda:
            nvtx = Nvtx()

            @staticmethod
            def is_available():
                return True

            @staticmethod
            def is_initialized():
                return True

        self.cuda = Cuda()
        self.compiled = []

        def compile(model, **kwargs):
            fake.compiled.append(model)
            return model

        self.compile = compile
        codecache = types.ModuleType("torch._inductor.codecache")

        class PyCodeCache:
            loaded = []

            @classmethod
            def load_by_key_path(cls, key, path, linemap=None, attrs=None):
                cls.loaded.append((key, path))
                return types.ModuleType("wrapper_" + key)

        codecache.PyCodeCache = PyCodeCache
        compile_fx = types.ModuleType("torch._inductor.compile_fx")

        def compile_fx_impl(model_, example_inputs_, **kwargs):
            # Inductor loads the forward wrapper while the Dynamo graph compiles.
            return PyCodeCache.load_by_key_path("k0", fake.wrapper_path, linemap=fake.linemap)

        compile_fx.compile_fx = compile_fx_impl
        self.modules = {"torch._inductor.codecache": codecache,
                        "torch._inductor.compile_fx": compile_fx,
                        "torch._inductor": types.ModuleType("torch._inductor"),
                        "torch": types.ModuleType("torch")}
        self.modules["torch._inductor"].codecache = codecache
        self.modules["torch._inductor"].compile_fx = compile_fx
        self.modules["torch"]._inductor = self.modules["torch._inductor"]


class Install(unittest.TestCase):
    def tearDown(self):
        fi._state.update({"installed": False, "hooked": False, "tables": {}, "stack": [],
                          "pending": [], "seen": set(), "torch": None})

    def test_hooks_at_first_compile_and_marks_each_kernel_once_at_load(self):
        torch = FakeTorch()
        torch.wrapper_path = os.path.join(HERE, "fixture_forward_wrapper.py.txt")
        torch.linemap = [(1, '  File "/w/model.py", line 7, in forward\n')]
        saved = {k: sys.modules.get(k) for k in torch.modules}
        for k in torch.modules:
            sys.modules.pop(k, None)
        try:
            original = torch.compile
            fi.install(torch)  # Inductor not imported yet: torch.compile is wrapped
            self.assertIsNot(torch.compile, original)
            self.assertFalse(fi._state["hooked"])
            sys.modules.update(torch.modules)
            torch.compile("model")
            self.assertEqual(torch.compiled, ["model"])
            self.assertTrue(fi._state["hooked"])

            class Node:
                def __init__(self, name, trace, stack):
                    self.name, self.meta = name, {"stack_trace": trace, "nn_module_stack": stack}

            class Graph:
                nodes = [Node("relu", '  File "/w/model.py", line 40, in forward\n',
                              {"a": ("L['self'].block", object)})]

            class Gm:
                graph = Graph()

            torch.modules["torch._inductor.compile_fx"].compile_fx(Gm(), [])
            self.assertEqual(len(torch.marks), 4)
            docs = [json.loads(t[len(fi.MARK_PREFIX):]) for t in torch.marks]
            ln = [d for d in docs if d["kernel"] == "triton_per_fused_native_layer_norm_relu_0"][0]
            self.assertEqual(ln["nodes"][0], {"name": "relu", "line": "/w/model.py:40", "module": "block"})
            self.assertEqual(ln["lines"], ["/w/model.py:7"])
            # The same wrapper loaded again (a cache hit in the same process): no new marks.
            torch.modules["torch._inductor.codecache"].PyCodeCache.load_by_key_path("k0", torch.wrapper_path)
            self.assertEqual(len(torch.marks), 4)
        finally:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v

    def test_install_without_cuda_hooks_nothing_and_never_raises(self):
        class Cuda:
            @staticmethod
            def is_available():
                return False

        class Torch:
            cuda = Cuda()

            @staticmethod
            def compile(model, **kwargs):
                return model

        torch = Torch()
        fi.install(torch)
        self.assertEqual(torch.compile("m"), "m")
        self.assertFalse(fi._state["hooked"])
        fi.install(object())  # no torch.compile yet (torch still importing): nothing, no error
        fi._state["installed"] = False
        fi.install(object())
        self.assertFalse(fi._state["installed"])


if __name__ == "__main__":
    unittest.main()
