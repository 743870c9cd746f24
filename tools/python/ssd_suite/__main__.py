"""python3 -m ssd_suite fuzz --adapter MODULE:NAME ...: a campaign of a Python adapter with
ssd-fuzz's options, output and exit status (0 clean, 1 failures, 2 usage, 3 nothing tested);
the adapter runs in a worker process (--isolation, --case-timeout); --kernels runs a kernel library
through the C API instead."""
import argparse
import sys


def read_problems(path):
    """The problem strings of a file as ssd-fuzz --problems reads one: one per line, '#' comments."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ValueError(f"argument '--problems': cannot read {path} ({e.strerror})") from None
    problems = [line.split("#", 1)[0].strip() for line in lines]
    problems = [p for p in problems if p]
    if not problems:
        raise ValueError(f"argument '--problems': {path} lists no problem")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m ssd_suite")
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fuzz", help="fuzz an adapter against the float64 oracle")
    which = f.add_mutually_exclusive_group(required=True)
    which.add_argument("--adapter", help="MODULE:NAME or MODULE, e.g. ssd_suite.adapters.numpy_ref")
    which.add_argument("--kernels", help="a kernel library: a .so path or a suite name (emulation, mutant-<flaw>)")
    f.add_argument("--ops", help="comma separated (default: every op the adapter implements)")
    f.add_argument("--dtypes", help="primary dtypes, comma separated (default: all)")
    f.add_argument("--time", type=float, help="seconds (default 60)")
    f.add_argument("--cases", type=int, help="cases of this shard, instead of --time")
    f.add_argument("--seed", type=int, help="campaign seed (default: from the clock; printed)")
    f.add_argument("--shard", default="0/1", help="i/n: run the cases k with k %% n == i")
    f.add_argument("--max-failures", type=int, default=1, help="failures per op before that op stops")
    f.add_argument("--large", type=float, default=0.05, help="fraction of cases with large shapes")
    f.add_argument("--problem", action="append", default=[], help="replay this problem string (repeatable)")
    f.add_argument("--problems", help="replay the problem strings of this file (one per line, '#' comments), "
                                      "e.g. golden/data/manifest.txt")
    f.add_argument("--shrink-seconds", type=float, default=30.0, help="time to shrink each failure (0: none)")
    f.add_argument("--report", help="write a JSON report (ssd-fuzz's schema) to this file")
    f.add_argument("--dump", default="ssd-fuzz-failures", help="folder for failing cases' case files ('' = none)")
    f.add_argument("--isolation", choices=("process", "none"), default="process",
                   help="process: adapter calls run in a worker process that a crash or hang cannot take down "
                        "(default); none: in this process")
    f.add_argument("--case-timeout", help="seconds an adapter call may run before it is TIMEOUT, in (0, 1e7] "
                                          "(default: 60 s, 300 s for the first call of an op and dtype in a "
                                          "worker, plus 1 s per million elements)")
    args = parser.parse_args(argv)
    import ssd_suite
    from ssd_suite.adapter import load_adapter
    from ssd_suite.isolation import check_case_timeout

    try:
        if args.kernels:
            from ssd_suite.adapters.kernel_library import KernelLibrary

            adapter, prefix = KernelLibrary(args.kernels), f"python3 -m ssd_suite fuzz --kernels {args.kernels}"
        else:
            load_adapter(args.adapter, "--adapter")  # a bad spec is a usage error naming the option
            adapter, prefix = args.adapter, f"python3 -m ssd_suite fuzz --adapter {args.adapter}"
        problems = args.problem + (read_problems(args.problems) if args.problems else [])
        if args.shrink_seconds < 0 or args.shrink_seconds != args.shrink_seconds:
            raise ValueError(f"argument '--shrink-seconds': {args.shrink_seconds} is not a number of seconds >= 0")
        case_timeout = check_case_timeout(args.case_timeout, "--case-timeout")
        result = ssd_suite.fuzz(adapter, ops=args.ops.split(",") if args.ops else None, time=args.time,
                                cases=args.cases, seed=args.seed, shard=args.shard,
                                dtypes=args.dtypes.split(",") if args.dtypes else None, large=args.large,
                                max_failures=args.max_failures, problems=problems, repro_prefix=prefix,
                                shrink_seconds=args.shrink_seconds,
                                report=args.report, dump=args.dump or None, isolation=args.isolation,
                                case_timeout=case_timeout)
    except (ValueError, ssd_suite.SsdError) as e:
        print(f"ssd_suite: {e}", file=sys.stderr)
        return 2
    return result.exit_status


if __name__ == "__main__":
    sys.exit(main())
