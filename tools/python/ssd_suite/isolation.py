"""Where a campaign runs its adapter calls: in a worker process that a crash, a hang or a lost
device cannot take down (isolation "process", ssd_suite.worker), or in the campaign's own process
("none"); which of the two by default, and why (docs/python.md, "Isolation")."""
import importlib.machinery
import math
import sys
import types

from .adapter import adapter_name, check_case, is_library
from .worker import Worker, WorkerError

ISOLATIONS = ("process", "none")
MAX_CASE_TIMEOUT = 1e7  # seconds, ssd-fuzz's bound on --case-timeout


def adapter_spec(adapter):
    """(MODULE or MODULE:NAME, None) when a fresh process can import `adapter` back by name, else
    (None, why not)."""
    if isinstance(adapter, types.ModuleType):
        module_name, attr = adapter.__name__, None
    elif isinstance(adapter, dict):
        return None, "a dict of functions has no name another process can import"
    else:
        module_name = getattr(adapter, "__module__", None)
        module = sys.modules.get(module_name) if isinstance(module_name, str) else None
        attr = next((k for k, v in vars(module).items() if v is adapter), None) if module else None
        if attr is None:
            return None, f"{adapter_name(adapter)} is not a module-level name of its module ({module_name})"
    if module_name == "__main__":
        return None, "it is defined in __main__, which another process cannot import without running it"
    if not _found_on_path(module_name):
        return None, f"module {module_name} was not imported from sys.path, so another process would not find it"
    return (f"{module_name}:{attr}" if attr else module_name), None


def _found_on_path(module_name):
    """Whether a fresh process importing `module_name` from sys.path gets the module this one has
    (not one loaded from elsewhere by file, nor another of the same name)."""
    module = sys.modules.get(module_name)
    parent, _, _ = module_name.rpartition(".")
    if parent and not _found_on_path(parent):
        return False
    path = getattr(sys.modules.get(parent), "__path__", None) if parent else None
    try:
        found = importlib.machinery.PathFinder.find_spec(module_name, path)
    except (ImportError, ValueError):
        return False
    origin = getattr(getattr(module, "__spec__", None), "origin", None)
    return found is not None and found.origin == origin


def check_case_timeout(case_timeout, argument="case_timeout"):
    """`case_timeout` as seconds in (0, 1e7], or None (the default limits); an error names `argument`."""
    if case_timeout is None:
        return None
    try:
        seconds = float(case_timeout)
    except (TypeError, ValueError):
        seconds = math.nan
    if not 0 < seconds <= MAX_CASE_TIMEOUT:  # NaN fails this too
        raise ValueError(f"argument '{argument}': {case_timeout!r} is not a number of seconds in (0, 1e7]")
    return seconds


class InProcess:
    """Checks cases in this process (isolation "none", and kernel libraries, whose calls the C
    API already runs in ssd-fuzz's own worker process)."""

    def __init__(self, adapter):
        self.adapter = adapter

    def check(self, problem):
        return check_case(self.adapter, problem)

    def submit(self, problem):
        """The case, to be checked when its judgement is asked for: in process nothing runs ahead."""
        return problem

    def judgement(self, request):
        return self.check(request)

    def dump(self, problem, folder):
        from .campaign import dump_case

        return dump_case(self.adapter, problem, folder)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open_checker(adapter, isolation=None, case_timeout=None, spec=None):
    """(checker, note): what runs the campaign's cases, started, and the line to print about the
    choice (None when there is nothing to say). `isolation` None picks "process" when the adapter
    can be imported by a fresh process (`spec`, else found by adapter_spec), "none" otherwise."""
    if isolation is not None and isolation not in ISOLATIONS:
        raise ValueError(f"argument 'isolation': '{isolation}' is neither 'process' nor 'none'")
    case_timeout = check_case_timeout(case_timeout)
    if is_library(adapter) or isolation == "none":
        return InProcess(adapter), None
    why = None
    if spec is None:
        spec, why = adapter_spec(adapter)
    if spec is None:
        if isolation == "process":
            raise ValueError(f"argument 'isolation': 'process' needs an adapter another process can import: {why}; "
                             "give it as a module or MODULE:NAME")
        return InProcess(adapter), (f"isolation none: {why}, so a crash or hang of the adapter ends the campaign "
                                    "(a module or MODULE:NAME runs in a worker process)")
    worker = Worker(adapter, spec, case_timeout)
    try:
        worker.start()
    except WorkerError as e:
        if isolation == "process":
            raise
        return InProcess(adapter), f"isolation none: {e}"
    return worker, None
