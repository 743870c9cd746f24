#!/usr/bin/env python3
"""The verdict table of docs/external-kernels.md from the JSON reports of tools/external/run.sh
(<library>-<mode>-<kind><shard>.json in ssd-fuzz's report schema): one row per library, mode, kind
(golden, fuzz, ...), op and dtype with the cases, each verdict, max r and max ratio, the shards of
one campaign added up; then each campaign's throughput, why cases were SKIPPED, and every failing
case with its problem and message.
    python3 tools/external/table.py REPORT.json ..."""
import json
import os
import re
import sys

VERDICTS = ("PASSED", "FAILED", "SUSPECT", "MISTRUSTED", "SKIPPED")


def campaign_of(path):
    """('mamba_ssm', 'tf32', 'fuzz') of .../mamba_ssm-tf32-fuzz1.json."""
    tag = os.path.basename(path)
    parts = tag[: -len(".json")].rsplit("-", 2) if tag.endswith(".json") else []
    if len(parts) != 3:
        raise SystemExit(f"table.py: argument '{path}': not named <library>-<mode>-<kind>.json")
    library, mode, kind = parts
    return library, mode, re.sub(r"\d+$", "", kind)


def merge(paths):
    """Per campaign: rows by (op, dtype) added up over its shards, its failures, cases and the
    longest shard's seconds (the shards ran side by side), and each shard's summary line."""
    campaigns = {}
    for path in sorted(paths):
        with open(path) as f:
            report = json.load(f)
        c = campaigns.setdefault(campaign_of(path), {"rows": {}, "failures": [], "seconds": 0.0, "summaries": []})
        c["seconds"] = max(c["seconds"], report["seconds"])
        c["summaries"].append(report["summary"])
        c["failures"] += report["failures"]
        for row in report["by_op_and_dtype"]:
            into = c["rows"].setdefault((row["op"], row["dtype"]), {"cases": 0, "max_r": 0.0, "max_ratio": 0.0,
                                                                   "skip_reasons": {}, **{v: 0 for v in VERDICTS}})
            for key in ("cases",) + VERDICTS:
                into[key] += row[key]
            for key in ("max_r", "max_ratio"):
                value = float("inf") if row[key] == "inf" else row[key]
                into[key] = max(into[key], value)
            for why, n in row.get("skip_reasons", {}).items():
                into["skip_reasons"][why] = into["skip_reasons"].get(why, 0) + n
    return campaigns


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    campaigns = merge(paths)
    print("| library | f32 dots | cases from | op | dtype | cases | PASSED | FAILED | SUSPECT | MISTRUSTED | SKIPPED "
          "| max r | max ratio |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (library, mode, kind), c in campaigns.items():
        for (op, dtype), row in c["rows"].items():
            if row["cases"] == row["SKIPPED"]:
                continue  # listed with the skip reasons below
            counts = " | ".join(str(row[v]) for v in VERDICTS)
            print(f"| {library} | {mode} | {kind} | {op} | {dtype} | {row['cases']} | {counts} "
                  f"| {row['max_r']:.3g} | {row['max_ratio']:.3g} |")
    print("\n| library | f32 dots | cases from | cases judged | seconds | cases/s | summaries |")
    print("|---|---|---|---:|---:|---:|---|")
    for (library, mode, kind), c in campaigns.items():
        judged = sum(r["cases"] - r["SKIPPED"] for r in c["rows"].values())
        rate = judged / c["seconds"] if c["seconds"] else 0.0
        print(f"| {library} | {mode} | {kind} | {judged} | {c['seconds']:.0f} | {rate:.2f} | "
              f"{'; '.join(sorted(set(line.split(' (e.g.')[0] for line in c['summaries'])))} |")
    print("\nSKIPPED (library, op: cases, reason):\n")
    reasons = {}
    for (library, _mode, _kind), c in campaigns.items():
        for (op, _dtype), row in c["rows"].items():
            for why, n in row["skip_reasons"].items():
                reasons[(library, op, why)] = reasons.get((library, op, why), 0) + n
    for (library, op, why), n in sorted(reasons.items()):
        print(f"- {library}, {op}: {n}, {why}")
    print("\nFailing cases:\n")
    for (library, mode, kind), c in campaigns.items():
        for f in c["failures"]:
            message = f["message"].replace("\n", " ")[:300]
            print(f"- {library} {mode} {kind} {f['verdict']} `{f['problem']}` (max r {f['max_r']}): {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
