"""The JSON report of a campaign in ssd-fuzz's schema (fuzz/src/report.cpp): per op and dtype the
cases, each verdict, not-finite cases, max r, max ratio and the r histogram in decades, and every failure with
its problem, original case and repro command; written to a temporary name, then renamed."""
import json
import math
import os
import tempfile

DECADES = ("<1e-4", "<1e-3", "<1e-2", "<0.1", "<1", "<10", ">=10", "inf")
DTYPE_ORDER = ("f64", "f32", "f16", "bf16", "i32")  # ssd::DType's order, as ssd-fuzz sorts its rows


def r_decade(r):
    """The decade of a case's max r (ssd::r_decade): [0,1e-4) ... [10,inf), then inf."""
    if not math.isfinite(r):
        return len(DECADES) - 1
    for d in range(len(DECADES) - 2):
        if r < 10.0 ** (d - 4):
            return d
    return len(DECADES) - 2


def _number_or_inf(v):
    return v if math.isfinite(v) else "inf"  # JSON has no infinity


def _tally(t):
    return {"cases": t.cases, "PASSED": t.passed, "FAILED": t.failed, "MISTRUSTED": t.mistrusted,
            "CRASHED": t.crashed, "TIMEOUT": t.timeout, "VARIANT": t.variant, "SUSPECT": t.suspect, "SKIPPED": t.skipped, "INVALID": t.invalid,
            "not_finite": t.not_finite, "max_r": _number_or_inf(t.max_r), "max_ratio": _number_or_inf(t.max_ratio),
            "seconds": t.seconds, "r_decades": dict(zip(DECADES, t.r_decades)),
            "skip_reasons": dict(sorted(t.skip_reasons.items(), key=lambda kv: -kv[1]))}


def json_report(result, kernels, library, seed, shard, repro_prefix, op_order):
    rows = []
    for (op, dtype), t in sorted(result.by_dtype.items(),
                                 key=lambda kv: (op_order.index(kv[0][0]), DTYPE_ORDER.index(kv[0][1]))):
        row = _tally(t)
        row["op"], row["dtype"] = op, dtype
        rows.append(row)
    failures = [{"op": f.minimal.op, "dtype": f.minimal.dtype, "verdict": f.judgement.verdict,
                 "problem": f.judgement.problem, "original": str(f.original),
                 "max_r": _number_or_inf(f.judgement.max_r), "max_ratio": _number_or_inf(f.judgement.max_ratio),
                 "message": f.judgement.message,
                 "description": f.judgement.description,
                 "repro": f"{repro_prefix} --problem '{f.judgement.problem}'", "case_file": f.dump}
                for f in result.failures]
    status = result.summary()[0]
    report = {"kernels": kernels, "library": library, "seed": seed, "shard": f"{shard[0]}/{shard[1]}",
              "seconds": result.seconds, "exit_status": status, "summary": result.summary_line(),
              "stopped_by": result.stopped_by,
              "unimplemented_ops": list(result.unimplemented), "by_op_and_dtype": rows, "failures": failures}
    return json.dumps(report, indent=2) + "\n"


def write_report(path, text):
    """Writes atomically: a reader never sees half a report."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".report-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
