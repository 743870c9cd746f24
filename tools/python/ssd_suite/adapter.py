"""What the campaign accepts as an adapter, and how one case runs through it: a callable per op
(a dict {op: fn}, or an object or module with one attribute per op name), called as
fn(problem, inputs) -> {output name: array}, the inputs being strided views where the problem lays
them out (layout=, ssd_suite.views); NotImplementedError means SKIPPED, any other exception a
FAILED case. An object with check(problem) -> Judgement (a kernel library) is used as is. An
adapter whose `f32_dots` is "tf32" declares that its library takes f32 operands into dot products
as TF32: its cases of the ops with dot products are judged as `dots=tf32` problems."""
import importlib
import traceback

from . import _capi
from .arrays import as_numpy, inputs as make_inputs
from .judgement import Judgement, judge
from .problem import Problem, op_names

DOT_PRODUCT_OPS = ("mamba2", "chunk_coupling", "chunk_state", "chunk_scan")


def load_adapter(spec, argument="adapter"):
    """MODULE:NAME (an attribute of a module) or MODULE (the module itself, one function per op);
    an error names `argument`, where the spec came from."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr) if attr else module
    except (ImportError, AttributeError) as e:
        raise ValueError(f"argument '{argument}': cannot load '{spec}': {e}") from None


def adapter_name(adapter):
    name = getattr(adapter, "name", None)
    if isinstance(name, str):
        return name
    return getattr(adapter, "__name__", None) or type(adapter).__name__


def is_library(adapter):
    """A kernel-library style adapter: judges whole cases itself."""
    return callable(getattr(adapter, "check", None)) and callable(getattr(adapter, "implements", None))


def op_function(adapter, op):
    """The adapter's callable for `op`, or None when it has none."""
    if is_library(adapter):
        return adapter.check if adapter.implements(op) else None
    fn = adapter.get(op) if isinstance(adapter, dict) else getattr(adapter, op, None)
    return fn if callable(fn) else None


def implemented_ops(adapter, ops=None):
    requested = list(ops) if ops else op_names()
    known = op_names()
    for op in requested:
        if op not in known:
            raise ValueError(f"argument 'ops': unknown op '{op}' (expected one of {', '.join(known)})")
    have = [op for op in requested if op_function(adapter, op) is not None]
    return have, [op for op in requested if op not in have]


def _adapter_failure(problem, what, error):
    last = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    where = f" at {last.filename}:{last.lineno}" if last else ""
    return Judgement("FAILED", problem, message=f"{what}: {type(error).__name__}: {error}{where}")


def declared_f32_dots(adapter):
    """"ieee" or "tf32": how the adapter says its library takes f32 operands into dot products."""
    dots = getattr(adapter, "f32_dots", "ieee")
    if dots not in ("ieee", "tf32"):
        raise ValueError(f"adapter {adapter_name(adapter)}: f32_dots '{dots}' is neither 'ieee' nor 'tf32'")
    return dots


def as_declared(adapter, problem):
    """The problem as the adapter's library is judged on it: with dots=tf32 where it declares TF32
    dot products (ssd-fuzz does the same for a kernel library that declares them)."""
    if is_library(adapter) or problem.op not in DOT_PRODUCT_OPS or declared_f32_dots(adapter) == "ieee":
        return problem
    text = str(problem)
    return problem if "dots=" in text else Problem(text + " dots=tf32")


def check_case(adapter, problem):
    """Runs one valid problem through the adapter and judges it; never raises for the adapter's
    sake (its errors become a FAILED judgement with the exception)."""
    return run_case(adapter, problem)[0]


def run_case(adapter, problem, watch=None):
    """check_case, also returning the adapter's outputs on the host (None when it produced none, or
    for a kernel library, which judges inside the C API). `watch` (a worker process's) is told
    when the adapter call starts, watch.calling(inputs), and when it has ended,
    watch.returned(error), so that only the call itself runs under the case's time limit."""
    fn = op_function(adapter, problem.op)
    problem = as_declared(adapter, problem)
    if fn is None:
        return Judgement("SKIPPED", problem, message=f"{adapter_name(adapter)} does not implement {problem.op}"), None
    if is_library(adapter):
        return fn(problem), None
    if "+farslots" in str(problem).split():
        # The far state buffer is laid out by the kernel-ABI runner only; here the adapter would get
        # the compact slots and test nothing of the option (docs/contract.md §8.1, "Far slot ids").
        return Judgement("SKIPPED", problem, message=f"{adapter_name(adapter)}: +farslots reaches kernel-ABI "
                                                     "libraries only (the Python package lays out no far slots)"), None
    try:
        case_inputs = make_inputs(problem)
    except MemoryError as e:  # the buffers of +far views, on a host that refuses them
        return Judgement("SKIPPED", problem, message=f"{adapter_name(adapter)}: {e}"), None
    if watch is not None:
        watch.calling(case_inputs)
    outputs, settled, error = _call(adapter, fn, problem, case_inputs)
    if watch is not None:
        watch.returned(error)
    if settled is not None:
        return settled, None
    try:
        return judge(problem, outputs, truth=case_inputs.truth()), outputs
    except (_capi.SsdArgumentError, TypeError, ValueError) as e:
        return _adapter_failure(problem, "the adapter's outputs", e), None


def _call(adapter, fn, problem, case_inputs):
    """(outputs on the host, None, None), or (None, the SKIPPED or FAILED judgement, the error).
    The outputs are read onto the host here, not when judged: a device tensor is read after its
    kernel finished, so a kernel that hangs or faults on the device does so inside the call."""
    try:
        outputs = fn(problem, case_inputs)
    except NotImplementedError as e:
        message = f"{adapter_name(adapter)}: {e}" if str(e) else "not implemented"
        return None, Judgement("SKIPPED", problem, message=message), None
    except Exception as e:  # noqa: BLE001 - any error of the adapter is a verdict on it
        return None, _adapter_failure(problem, "the adapter raised", e), e
    if not hasattr(outputs, "items"):
        return outputs, None, None  # judge() says what it wanted
    try:
        return {name: as_numpy(array, f"outputs['{name}']") for name, array in outputs.items()}, None, None
    except TypeError as e:
        return None, _adapter_failure(problem, "the adapter's outputs", e), e
    except Exception as e:  # noqa: BLE001 - e.g. torch.AcceleratorError: an illegal memory access
        return None, _adapter_failure(problem, "the adapter's outputs could not be read (a device error reported "
                                               "late)", e), e
