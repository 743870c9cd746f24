"""Markdown tables from ssd-tightness output (docs/tolerance.md, "Headroom at full size").

usage: python3 tools/bench/tightness_table.py BEFORE.txt [AFTER.txt]
       python3 tools/bench/tightness_table.py --by-op BEFORE.txt AFTER.txt   (per op and dtype)
One row per problem and output: alpha* (1 / the larger max r of the kernels), the SUSPECT ratio,
the median and 90th percentile of bound/|y*|, the share of elements with |y*| <= bound; with two
files, before -> after. A second table gives each output's dominant terms (mean share of the bound).
"""
import re
import sys


def parse(path):
    rows, problem = {}, None
    for line in open(path):
        m = re.match(r"problem (.*)", line)
        if m:
            problem = m.group(1).strip()
            continue
        m = re.match(r"  output (\S+): elements (\d+), bound/\|y\*\| median (\S+) p90 (\S+), \|y\*\|<=bound (\S+)%(.*)", line)
        if m and problem:
            name = m.group(1)
            rs = [float(x) for x in re.findall(r" r (\S+) ratio", m.group(6))]
            ratios = [float(x) for x in re.findall(r"ratio (\S+?)(?:,|$)", m.group(6).strip())]
            rows[(problem, name)] = dict(elements=int(m.group(2)), median=float(m.group(3)), p90=float(m.group(4)),
                                         within=float(m.group(5)), r=max(rs) if rs else 0.0,
                                         ratio=max(ratios) if ratios else 0.0, terms={})
            continue
        m = re.match(r"    terms \(mean share / elements where largest\):(.*)", line)
        if m and problem and rows:
            key = list(rows)[-1]
            for name, share, dom in re.findall(r" ([a-z_ ]+?) ([0-9.]+)/([0-9.]+)", m.group(1)):
                rows[key]["terms"][name.strip()] = float(share)
    return rows


def alpha(r):
    return "inf" if r == 0 else "%.3g" % (1 / r)


def cases(path):
    """problem -> (max r over its kernels, max ratio, verdicts)."""
    out, problem = {}, None
    for line in open(path):
        m = re.match(r"problem (.*)", line)
        if m:
            problem = m.group(1).strip()
            out[problem] = [0.0, 0.0, set()]
            continue
        m = re.match(r"  verdict \S+: (\S+) max r (\S+) ratio (\S+)", line)
        if m and problem:
            out[problem][0] = max(out[problem][0], float(m.group(2)))
            out[problem][1] = max(out[problem][1], float(m.group(3)))
            out[problem][2].add(m.group(1))
    return out


def by_op(before_path, after_path):
    """Per op and primary dtype: problems, verdicts, smallest and median alpha*, largest ratio."""
    import statistics
    before, after = cases(before_path), cases(after_path)
    groups = {}
    for problem in before:
        head = problem.split()[0]
        groups.setdefault(head, []).append(problem)
    print("| op:dtype | problems | verdicts after | smallest alpha* | median alpha* | largest SUSPECT ratio |")
    print("|---|---:|---|---:|---:|---:|")
    for head, problems in groups.items():
        def stats(d):
            alphas = sorted(1 / d[p][0] for p in problems if d[p][0] > 0)
            return (alphas[0] if alphas else float("inf"), statistics.median(alphas) if alphas else float("inf"),
                    max(d[p][1] for p in problems))
        b, a = stats(before), stats(after)
        verdicts = sorted({v for p in problems for v in after[p][2]})
        print("| %s | %d | %s | %.3g -> %.3g | %.3g -> %.3g | %.3g -> %.3g |" % (
            head, len(problems), " ".join(verdicts), b[0], a[0], b[1], a[1], b[2], a[2]))


def main():
    if sys.argv[1] == "--by-op":
        by_op(sys.argv[2], sys.argv[3])
        return
    before = parse(sys.argv[1])
    after = parse(sys.argv[2]) if len(sys.argv) > 2 else None
    print("| problem | output | alpha* | SUSPECT ratio | bound/\\|y*\\| median | p90 | \\|y*\\| <= bound |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for key, b in before.items():
        cells = []
        a = after.get(key) if after else None
        for f, fmt in (("r", alpha), ("ratio", lambda v: "%.3g" % v), ("median", lambda v: "%.3g" % v),
                       ("p90", lambda v: "%.3g" % v), ("within", lambda v: "%.3g %%" % v)):
            cells.append(fmt(b[f]) + (" -> " + fmt(a[f]) if a else ""))
        print("| `%s` | %s | %s |" % (key[0], key[1], " | ".join(cells)))
    print()
    print("| problem | output | dominant terms (mean share of the bound)%s |" % (", before -> after" if after else ""))
    print("|---|---|---|")
    for key, b in before.items():
        def top(t):
            return ", ".join("%s %.2f" % (n, s) for n, s in sorted(t.items(), key=lambda x: -x[1]) if s >= 0.01)
        a = after.get(key) if after else None
        print("| `%s` | %s | %s%s |" % (key[0], key[1], top(b["terms"]), (" -> " + top(a["terms"])) if a else ""))


main()
