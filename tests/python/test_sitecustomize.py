"""prof-run's Python instrumentation (tools/prof-run/python) with a fake `torch` package.

Each case runs a fresh interpreter with PYTHONPATH = <FuseLens python folder>:<user folder>:<fake
torch folder>, as prof-run sets it, and checks what it printed: the chain to the user's
sitecustomize, the hooks installed once torch is imported, the module paths and the NVTX ranges
of forward and backward, exceptions contained, the off switch and the compile guard.
Usage: python3 test_sitecustomize.py PYTHON_DIR (ctest passes the folder).
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

PYTHON_DIR = None

# A fake torch: nn.Module calling global hooks as torch's _call_impl does, autograd nodes with
# sequence numbers, next_functions, metadata and hooks, and an NVTX log.
FAKE_TORCH = {
    "torch/__init__.py": """
        from . import cuda, nn, compiler, jit, autograd
        IMPORTED = True
    """,
    "torch/compiler.py": """
        COMPILING = [False]
        def is_compiling():
            return COMPILING[0]
    """,
    "torch/jit.py": """
        def is_scripting():
            return False
    """,
    "torch/cuda/__init__.py": """
        from . import nvtx
        AVAILABLE = [True]
        def is_available():
            return AVAILABLE[0]
    """,
    "torch/cuda/nvtx.py": """
        import threading
        LOG = []
        def range_push(msg):
            LOG.append(("push", msg, threading.current_thread().name))
            return 0
        def range_pop():
            LOG.append(("pop", None, threading.current_thread().name))
            return 0
        def mark(msg):
            LOG.append(("mark", msg, threading.current_thread().name))
    """,
    "torch/autograd.py": """
        import itertools
        _counter = itertools.count()
        class Node:
            def __init__(self, name, inputs=(), leaf=False):
                self.name = name
                self._seq = 2 ** 64 - 1 if leaf else next(_counter)
                self.next_functions = tuple((n, 0) for n in inputs)
                self.metadata = {}
                self.pre, self.post = [], []
            def _sequence_nr(self):
                return self._seq
            def register_prehook(self, fn):
                self.pre.append(fn)
            def register_hook(self, fn):
                self.post.append(fn)
        class Tensor:
            def __init__(self, grad_fn=None):
                self.grad_fn = grad_fn
        def op(name, *tensors):
            return Tensor(Node(name, [t.grad_fn for t in tensors if t.grad_fn]))
        def backward(tensor):
            # Runs every node once, outputs first (reverse creation order), as the engine would.
            nodes, todo, seen = [], [tensor.grad_fn], set()
            while todo:
                n = todo.pop()
                if n is None or id(n) in seen:
                    continue
                seen.add(id(n)); nodes.append(n)
                todo.extend(f for f, _ in n.next_functions)
            ran = []
            for n in sorted(nodes, key=lambda n: -n._seq):
                for h in n.pre: h(None)
                ran.append(n.name)
                for h in n.post: h(None, None)
            return ran
    """,
    "torch/nn/__init__.py": """
        from . import modules
        from .modules.module import Module
    """,
    "torch/nn/modules/__init__.py": """
        from . import module
    """,
    "torch/nn/modules/module.py": """
        _pre, _post = {}, {}
        class _Handle:
            def __init__(self, table, key):
                self.table, self.key = table, key
            def remove(self):
                self.table.pop(self.key, None)
        def register_module_forward_pre_hook(hook):
            key = len(_pre) + len(_post)
            _pre[key] = hook
            return _Handle(_pre, key)
        def register_module_forward_hook(hook, *, always_call=False):
            key = len(_pre) + len(_post) + 100
            _post[key] = hook
            return _Handle(_post, key)
        class Module:
            def __init__(self):
                object.__setattr__(self, "_modules", {})
            def __setattr__(self, name, value):
                if isinstance(value, Module):
                    self._modules[name] = value
                object.__setattr__(self, name, value)
            def named_modules(self, prefix=""):
                yield prefix, self
                for name, child in self._modules.items():
                    yield from child.named_modules(prefix + "." + name if prefix else name)
            def __call__(self, *args):
                for hook in list(_pre.values()):
                    hook(self, args)
                result = None
                try:
                    result = self.forward(*args)
                    return result
                finally:
                    for hook in list(_post.values()):
                        hook(self, args, result)
    """,
}

MODEL = """
    import json
    import torch
    from torch.autograd import op, Tensor, Node, backward
    from torch.cuda import nvtx

    class Conv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = Tensor(Node("AccumulateGrad", leaf=True))
        def forward(self, x):
            return op("ConvBackward", x, self.weight)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = Conv()
        def forward(self, x):
            return op("ReluBackward", self.conv(x))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.features = Block()
            self.head = Conv()
        def forward(self, x):
            y = self.features(x)
            y = op("AddBackward", y, x)  # the Net's own op, between its children
            return self.head(y)
"""


def write_tree(root, files):
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))


class SiteCustomizeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.user = os.path.join(self.tmp.name, "user")
        self.fake = os.path.join(self.tmp.name, "fake")
        os.makedirs(self.user)
        write_tree(self.fake, FAKE_TORCH)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, body, env=None, user_site=None):
        if user_site is not None:
            write_tree(self.user, {"sitecustomize.py": user_site})
        script = os.path.join(self.tmp.name, "script.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(MODEL) + textwrap.dedent(body))
        environment = dict(os.environ)
        environment.pop("FUSELENS_PYTHON_FRAMES", None)
        environment["FUSELENS_TORCH_MODULES"] = "hooks"  # the NVTX ranges these tests read
        environment["PYTHONPATH"] = os.pathsep.join([PYTHON_DIR, self.user, self.fake])
        environment.update(env or {})
        done = subprocess.run([sys.executable, script], env=environment, capture_output=True,
                              text=True, timeout=60, cwd=self.tmp.name)
        return done

    def test_chains_to_the_users_sitecustomize(self):
        done = self.run_script(
            "import sitecustomize\nprint(json.dumps(sitecustomize.USER))\n",
            user_site="USER = 'ran'\n")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), '"ran"')

    def test_a_failing_user_sitecustomize_is_reported_and_the_program_runs(self):
        done = self.run_script(
            "model = Net()\nmodel(Tensor())\nprint(len(nvtx.LOG))\n",
            user_site="raise RuntimeError('broken user site')\n")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("Error in sitecustomize", done.stderr)
        self.assertIn("broken user site", done.stderr)
        self.assertGreater(int(done.stdout.strip()), 0)  # the hooks still installed

    def test_names_forward_ranges_by_instance_path(self):
        done = self.run_script("""
            model = Net()
            model(Tensor())
            print(json.dumps([(kind, msg) for kind, msg, _ in nvtx.LOG]))
        """)
        self.assertEqual(done.returncode, 0, done.stderr)
        log = json.loads(done.stdout)
        pushes = [msg for kind, msg in log if kind == "push"]
        self.assertEqual(pushes, [
            "fuselens:module:fwd:model",
            "fuselens:module:fwd:model.features",
            "fuselens:module:fwd:model.features.conv",
            "fuselens:module:fwd:model.head",
        ])
        depth = 0
        for kind, _ in log:  # balanced, never below zero
            depth += 1 if kind == "push" else -1
            self.assertGreaterEqual(depth, 0)
        self.assertEqual(depth, 0)

    def test_root_without_a_variable_is_named_by_its_class(self):
        done = self.run_script("""
            Net()(Tensor())
            print(json.dumps([msg for kind, msg, _ in nvtx.LOG if kind == "push"][:2]))
        """)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout),
                         ["fuselens:module:fwd:Net", "fuselens:module:fwd:Net.features"])

    def test_backward_nodes_are_claimed_by_the_innermost_module(self):
        done = self.run_script("""
            import threading
            x = Tensor(Node("InputBackward"))  # created before the model: nobody's
            model = Net()
            out = model(x)
            del nvtx.LOG[:]
            result = {}
            def run():
                result["ran"] = backward(out)
            t = threading.Thread(target=run, name="pt_autograd_0")
            t.start(); t.join()
            print(json.dumps({"ran": result["ran"], "log": nvtx.LOG}))
        """)
        self.assertEqual(done.returncode, 0, done.stderr)
        data = json.loads(done.stdout)
        pushes = [msg for kind, msg, _ in data["log"] if kind == "push"]
        # head's conv, the Net's add, features' relu, features.conv's conv; not the input's node
        # nor the weights' AccumulateGrad.
        self.assertEqual(pushes, [
            "fuselens:module:bwd:model.head",
            "fuselens:module:bwd:model",
            "fuselens:module:bwd:model.features",
            "fuselens:module:bwd:model.features.conv",
        ])
        self.assertTrue(all(thread == "pt_autograd_0" for _, _, thread in data["log"]))
        self.assertEqual(sum(1 for k, _, _ in data["log"] if k == "pop"), len(pushes))

    def test_a_user_sitecustomize_that_imports_torch_still_gets_the_hooks(self):
        done = self.run_script("model = Net()\nmodel(Tensor())\nprint(len(nvtx.LOG) > 0)\n",
                               user_site="import torch\n")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "True")

    def test_modules_met_after_naming_are_named_inside_their_parent(self):
        done = self.run_script("""
            class Late(torch.nn.Module):
                def __init__(self, child):
                    super().__init__()
                    object.__setattr__(self, "hidden", child)  # not a registered submodule
                def forward(self, x):
                    y = self.hidden(x)
                    added = self._modules.get("added")
                    return added(y) if added is not None else y
            outer = Late(Conv())
            outer(Tensor())
            outer.added = Conv()  # registered after outer was named
            outer(Tensor())
            Conv()(Tensor())  # a root held by no variable: its class name
            print(json.dumps([msg for kind, msg, _ in nvtx.LOG if kind == "push"]))
        """)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout), [
            "fuselens:module:fwd:outer",
            "fuselens:module:fwd:outer.Conv",
            "fuselens:module:fwd:outer",
            "fuselens:module:fwd:outer.Conv",
            "fuselens:module:fwd:outer.added",
            "fuselens:module:fwd:Conv",
        ])

    def test_backward_of_a_second_call_skips_nodes_made_before_it(self):
        done = self.run_script("""
            model = Net()
            first = model(Tensor())
            second = model.head(first)  # head again: only its new node is claimed, as head's
            ran = backward(second)
            pushes = [msg for kind, msg, _ in nvtx.LOG if kind == "push" and ":bwd:" in msg]
            print(json.dumps(pushes))
        """)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout), [
            "fuselens:module:bwd:model.head",  # the second call's conv
            "fuselens:module:bwd:model.head",  # the first call's, claimed at the first call
            "fuselens:module:bwd:model",
            "fuselens:module:bwd:model.features",
            "fuselens:module:bwd:model.features.conv",
        ])

    @unittest.skipUnless(sys.version_info[:2] in ((3, 11), (3, 12)),
                         "frames mode needs a CPython whose frames the collector reads (3.11, 3.12)")
    def test_frames_mode_names_the_tree_with_marks_and_pushes_no_range(self):
        done = self.run_script("""
            from torch.nn.modules import module as module_mod
            model = Net()
            model(Tensor())
            hooks_after_one_call = len(module_mod._pre) + len(module_mod._post)
            expected = {"%x" % id(m): (type(m).__name__, p) for p, m in
                        [("model", model), ("model.features", model.features),
                         ("model.features.conv", model.features.conv), ("model.head", model.head)]}
            print(json.dumps({"log": nvtx.LOG, "expected": expected,
                              "hooks": hooks_after_one_call}))
        """, env={"FUSELENS_TORCH_MODULES": "frames"})
        self.assertEqual(done.returncode, 0, done.stderr)
        data = json.loads(done.stdout)
        self.assertEqual([k for k, _, _ in data["log"]], ["mark"] * 4)  # no push, no pop
        named = {}
        for _, msg, _ in data["log"]:
            self.assertTrue(msg.startswith("fuselens:module:name:"), msg)
            address, cls, path = msg[len("fuselens:module:name:"):].split(":", 2)
            named[address] = [cls, path]
        self.assertEqual(named, {k: list(v) for k, v in data["expected"].items()})
        self.assertEqual(data["hooks"], 1)  # one pre-hook, no forward hook

    @unittest.skipUnless(sys.version_info[:2] in ((3, 11), (3, 12)),
                         "frames mode needs a CPython whose frames the collector reads (3.11, 3.12)")
    def test_frames_mode_hook_removes_itself_once_every_module_is_named(self):
        done = self.run_script("""
            from torch.nn.modules import module as module_mod
            model = Net()
            calls = 0
            while module_mod._pre and calls < 10000:
                model(Tensor()); calls += 1
            late = Conv()
            late(Tensor())  # after removal: no name, and nothing runs per call
            print(json.dumps({"left": len(module_mod._pre), "calls": calls,
                              "marks": sum(1 for k, _, _ in nvtx.LOG if k == "mark")}))
        """, env={"FUSELENS_TORCH_MODULES": "frames"})
        self.assertEqual(done.returncode, 0, done.stderr)
        data = json.loads(done.stdout)
        self.assertEqual(data["left"], 0)
        # 4 modules per call: removed after 256 calls of named modules (the first call names them)
        self.assertEqual(data["calls"], 1 + (256 - 3 + 3) // 4)
        self.assertEqual(data["marks"], 4)

    def test_frames_mode_falls_back_to_hooks_without_python_frames(self):
        done = self.run_script("model = Net()\nmodel(Tensor())\n"
                               "print(sum(1 for k, _, _ in nvtx.LOG if k == 'push'))\n",
                               env={"FUSELENS_TORCH_MODULES": "frames",
                                    "FUSELENS_PYTHON_FRAMES": "0"})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "4")

    def test_off_switch(self):
        done = self.run_script("model = Net()\nmodel(Tensor())\nprint(len(nvtx.LOG))\n",
                               env={"FUSELENS_TORCH_MODULES": "0"})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "0")

    def test_nothing_while_compiling_or_without_cuda(self):
        done = self.run_script("""
            torch.compiler.COMPILING[0] = True
            model = Net()
            model(Tensor())
            compiling = len(nvtx.LOG)
            torch.compiler.COMPILING[0] = False
            torch.cuda.AVAILABLE[0] = False
            model(Tensor())
            print(compiling, len(nvtx.LOG))
        """)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.split(), ["0", "0"])

    def test_a_failing_hook_is_contained_and_reported_once(self):
        done = self.run_script("""
            def broken(msg):
                raise RuntimeError("nvtx broke")
            nvtx.range_push = broken
            import fuselens_modules
            fuselens_modules._state.push = broken
            model = Net()
            for _ in range(3):
                model(Tensor())
            print("survived")
        """)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "survived")
        lines = [l for l in done.stderr.splitlines() if l.startswith("fuselens:")]
        self.assertEqual(len(lines), 1, done.stderr)
        self.assertIn("nvtx broke", lines[0])

    def test_a_failing_feature_install_is_contained(self):
        # A torch without the global module hooks: the feature's install fails.
        write_tree(self.fake, {"torch/nn/modules/module.py": "class Module:\n    pass\n"})
        script = os.path.join(self.tmp.name, "plain.py")
        with open(script, "w") as f:
            f.write("import torch\nprint('ran')\n")
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, self.fake]))
        environment.pop("FUSELENS_TORCH_MODULES", None)
        done = subprocess.run([sys.executable, script], env=environment, capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "ran")
        self.assertIn("fuselens: fuselens_modules disabled", done.stderr)

    def test_no_torch_no_effect(self):
        script = os.path.join(self.tmp.name, "plain.py")
        with open(script, "w") as f:
            f.write("import json, sys\nprint(json.dumps('torch' in sys.modules))\n")
        environment = dict(os.environ, PYTHONPATH=PYTHON_DIR)
        done = subprocess.run([sys.executable, script], env=environment, capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "false")
        self.assertEqual(done.stderr, "")


if __name__ == "__main__":
    PYTHON_DIR = os.path.realpath(sys.argv.pop(1))
    unittest.main(verbosity=2)
