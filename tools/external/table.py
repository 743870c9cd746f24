#!/usr/bin/env python3
"""The verdict table of docs/external-kernels.md from the JSON reports of tools/external/run.sh
(<library>-<mode>-<golden|fuzz>.json, the Python package's ssd-fuzz schema): one row per library,
mode, op and dtype with the cases, each verdict, max r and max ratio; then the campaigns' throughput,
why cases were SKIPPED, and every failing case with its problem and message.
    python3 tools/external/table.py REPORT.json ..."""
import json
import os
import sys

VERDICTS = ("PASSED", "FAILED", "SUSPECT", "MISTRUSTED", "SKIPPED")


def load(paths):
    runs = []
    for path in paths:
        tag = os.path.basename(path)[: -len(".json")]
        library, mode, kind = tag.rsplit("-", 2)
        with open(path) as f:
            runs.append((library, mode, kind, json.load(f)))
    return runs


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    runs = load(paths)
    print("| library | f32 dots | cases from | op | dtype | cases | PASSED | FAILED | SUSPECT | MISTRUSTED | SKIPPED "
          "| max r | max ratio |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for library, mode, kind, report in runs:
        for row in report["by_op_and_dtype"]:
            if row["cases"] == row["SKIPPED"]:
                continue  # listed with the skip reasons below
            counts = " | ".join(str(row[v]) for v in VERDICTS)
            print(f"| {library} | {mode} | {kind} | {row['op']} | {row['dtype']} | {row['cases']} | {counts} "
                  f"| {row['max_r']:.3g} | {row['max_ratio']:.3g} |")
    print("\n| library | f32 dots | cases from | cases | seconds | cases/s | summary |")
    print("|---|---|---|---:|---:|---:|---|")
    for library, mode, kind, report in runs:
        cases = sum(r["cases"] - r["SKIPPED"] for r in report["by_op_and_dtype"])
        rate = cases / report["seconds"] if report["seconds"] else 0.0
        print(f"| {library} | {mode} | {kind} | {cases} | {report['seconds']:.0f} | {rate:.1f} | {report['summary']} |")
    print("\nSKIPPED (library, op: cases, reason):\n")
    reasons = {}
    for library, _mode, _kind, report in runs:
        for row in report["by_op_and_dtype"]:
            for why, n in row.get("skip_reasons", {}).items():
                key = (library, row["op"], why)
                reasons[key] = reasons.get(key, 0) + n
    for (library, op, why), n in sorted(reasons.items()):
        print(f"- {library}, {op}: {n}, {why}")
    print("\nFailing cases:\n")
    for library, mode, kind, report in runs:
        for f in report["failures"]:
            message = f["message"].replace("\n", " ")[:300]
            print(f"- {library} {mode} {kind} {f['verdict']} `{f['problem']}` (max r {f['max_r']}): {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
