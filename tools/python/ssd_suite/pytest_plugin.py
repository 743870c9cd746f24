"""A pytest plugin: `pytest --ssd-adapter=MODULE:NAME` (or --ssd-kernels=LIB) adds one test item
per case, named by its problem string: the golden set's problems and --ssd-cases generated cases per
op (ssd-fuzz's case k of --ssd-seed), for every op the adapter implements. FAILED fails the item
with the verdict's description, SKIPPED and MISTRUSTED skip it. Loaded automatically once the
package is installed (entry point pytest11), else with `-p ssd_suite.pytest_plugin`."""
import os

import pytest

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "golden", "data", "manifest.txt")


def pytest_addoption(parser):
    group = parser.getgroup("ssd_suite", "SSD kernels against the float64 oracle")
    group.addoption("--ssd-adapter", help="MODULE:NAME or MODULE of an adapter (a callable per op)")
    group.addoption("--ssd-kernels", help="a kernel library (.so path or suite name) instead of an adapter")
    group.addoption("--ssd-cases", type=int, default=20, help="generated cases per op (default 20)")
    group.addoption("--ssd-seed", type=int, default=0, help="seed of the generated cases (default 0)")
    group.addoption("--ssd-ops", help="only these ops, comma separated")
    group.addoption("--ssd-golden", default=GOLDEN,
                    help="problem list of golden cases (default: the checkout's golden/data/manifest.txt; 'none')")


class SsdCaseFailed(Exception):
    pass


class SsdCase(pytest.Item):
    def __init__(self, *, problem, adapter, **kw):
        super().__init__(**kw)
        self.problem, self.adapter = problem, adapter

    def runtest(self):
        from .adapter import check_case

        j = check_case(self.adapter, self.problem)
        if j.verdict in ("SKIPPED", "MISTRUSTED"):
            pytest.skip(f"{j.verdict}: {j.message}")
        if j.verdict != "PASSED":
            raise SsdCaseFailed(j.description)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, SsdCaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return "ssd", None, f"ssd case {self.problem}"


def _problems(config, ops):
    from .problem import Problem, campaign_problem

    golden = config.getoption("ssd_golden")
    out = []
    if golden and golden != "none" and os.path.exists(golden):
        with open(golden) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    p = Problem(line)
                    if p.op in ops:
                        out.append(("golden", p))
    for op in ops:
        out += [("fuzz", campaign_problem(op, k, seed=config.getoption("ssd_seed")))
                for k in range(config.getoption("ssd_cases"))]
    return out


def pytest_collection_modifyitems(session, config, items):
    spec, kernels = config.getoption("ssd_adapter"), config.getoption("ssd_kernels")
    if not spec and not kernels:
        return
    from .adapter import implemented_ops, load_adapter

    if kernels:
        from .adapters.kernel_library import KernelLibrary

        adapter = KernelLibrary(kernels)
    else:
        adapter = load_adapter(spec, "--ssd-adapter")
    ops_option = config.getoption("ssd_ops")
    ops, _ = implemented_ops(adapter, ops_option.split(",") if ops_option else None)
    seen = set()
    for kind, problem in _problems(config, ops):
        name = f"{kind}[{problem}]"
        if name not in seen:
            seen.add(name)
            items.append(SsdCase.from_parent(session, name=name, problem=problem, adapter=adapter))
