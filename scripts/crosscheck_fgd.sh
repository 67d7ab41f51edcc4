#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cross-validates `ecosched place` against the FGD paper's reference simulator
# (hkust-adsl/kubernetes-scheduler-simulator) built from a checkout given on the command line:
# the reference runs each openb family and policy with its experiments' configuration
# (experiments/run_scripts/expected_run_scripts_0511.sh: tune 1.3, tuneseed 42, shufflePod),
# then ecosched replays the reference's own pod sequence (its shuffle and its tuned copies, read
# from its log) on the reference's node order (its random node renaming decides its ties), so
# both see identical inputs; the decisions are compared pod by pod and a markdown table of the
# allocated GPU share at 100 % and 130 % of capacity is printed on stdout.
#
# usage: scripts/crosscheck_fgd.sh REF_CHECKOUT_DIR [BUILD_DIR]
#   environment: DATA_DIR (openb CSVs; default data/alibaba_gpu_v2023_openb), FAMILIES (e.g.
#   "default gpushare100"; default every openb_pod_list_*.csv.gz in DATA_DIR), POLICIES
#   (default "Random DotProd GpuClustering GpuPacking BestFit FGD"), WORK_DIR (default
#   /var/tmp/crosscheck_fgd; reference logs there are reused, delete them to rerun), JOBS
#   (reference runs at a time, default 1), ALLOW_PARTIAL (non-empty: compare the pods an
#   unfinished reference log has reached, e.g. one still running; no allocation figures).
# Two replays: the listed pods alone in the reference's order (ecosched's typical pods are then
# the reference's, which builds them from the listed pods) decide the pod-by-pod table; all
# pods, tuned copies included, give the allocated shares (typical pods from all of them here).
# One reference run takes 10-40 minutes of CPU (its README: about 10 on 2 vCPU). Never part of
# `make check`: it needs Go and the reference's checkout, and exits 77 without them.
set -euo pipefail

ref=${1:-}
build=${2:-build}
if [ -z "$ref" ]; then
    echo "usage: $0 REF_CHECKOUT_DIR [BUILD_DIR]" >&2
    exit 2
fi
skip() {
    echo "crosscheck_fgd: SKIP: $*" >&2
    exit 77
}
[ -f "$ref/go.mod" ] && [ -d "$ref/cmd" ] && [ -d "$ref/vendor" ] ||
    skip "$ref is not a checkout of hkust-adsl/kubernetes-scheduler-simulator (go.mod, cmd/, vendor/)"
command -v go >/dev/null || skip "Go is not installed (Debian: apt-get install golang-go)"
python3 -c 'import yaml' 2>/dev/null || skip "python3 with PyYAML is needed (Debian: python3-yaml)"
eco=$(cd "$build" 2>/dev/null && pwd)/ecosched
[ -x "$eco" ] || skip "no ecosched binary in $build (build the project first)"

data=$(cd "${DATA_DIR:-data/alibaba_gpu_v2023_openb}" && pwd)
work=${WORK_DIR:-/var/tmp/crosscheck_fgd}
policies=${POLICIES:-Random DotProd GpuClustering GpuPacking BestFit FGD}
jobs=${JOBS:-1}
if [ -z "${FAMILIES:-}" ]; then
    FAMILIES=$(cd "$data" && ls openb_pod_list_*.csv.gz | sed 's/^openb_pod_list_//; s/\.csv\.gz$//')
fi
ref=$(cd "$ref" && pwd)
mkdir -p "$work"

# ---- the reference, built offline from its vendor/ folder ---------------------------------
simon="$work/simon"
if [ ! -x "$simon" ]; then
    echo "crosscheck_fgd: building the reference in $ref" >&2
    (cd "$ref" && GOFLAGS=-mod=vendor GOPROXY=off GOCACHE="${GOCACHE:-$work/gocache}" \
        nice -n 10 go build -o "$simon" ./cmd) || skip "the reference does not build offline"
fi

# the experiments' flags per policy (expected_run_scripts_0511.sh)
ref_flags() {
    case $1 in
    Random) echo "-Random 1000 -gpusel random" ;;
    DotProd) echo "-DotProd 1000 -gpusel best -dimext merge -norm max" ;;
    GpuClustering) echo "-GpuClustering 1000 -gpusel best" ;;
    GpuPacking) echo "-GpuPacking 1000 -gpusel best" ;;
    BestFit) echo "-BestFit 1000 -gpusel best" ;;
    FGD) echo "-FGD 1000 -gpusel FGD -dimext share -norm max" ;;
    *) return 1 ;;
    esac
}
eco_algo() {
    case $1 in
    Random) echo random ;;
    DotProd) echo dot-product-ref ;;
    GpuClustering) echo gpu-clustering ;;
    GpuPacking) echo gpu-packing ;;
    BestFit) echo best-fit ;;
    FGD) echo fgd ;;
    esac
}

py="$work/crosscheck.py"
cat >"$py" <<'EOF'
# Helpers of scripts/crosscheck_fgd.sh: pod CSV -> the reference's YAML (as its
# data/pod_csv_to_yaml.py writes it), the reference's log -> ecosched's inputs, and the
# comparison of the two runs.
import csv, gzip, json, re, sys

def rows(path):
    with (gzip.open(path, 'rt') if path.endswith('.gz') else open(path)) as f:
        r = csv.DictReader(f)
        return r.fieldnames, list(r)

def pods_yaml(src, dst):
    import yaml
    _, rs = rows(src)
    with open(dst, 'w') as out:
        for k, row in enumerate(rs):
            req = {'cpu': '%dm' % int(row['cpu_milli'])}
            if row.get('memory_mib', ''):
                req['memory'] = '%dMi' % int(row['memory_mib'])
            ann = {}
            if int(row['num_gpu']):
                m = int(row.get('gpu_milli') or 1000)
                ann['alibabacloud.com/gpu-milli'] = '%d' % m if 0 < m <= 1000 else (
                    '1000' if m > 1000 else '0')
                ann['alibabacloud.com/gpu-count'] = '%d' % int(row['num_gpu'])
                spec = '|'.join(x for x in (row.get('gpu_spec') or '').split('|') if x)
                if spec:
                    ann['alibabacloud.com/gpu-card-model'] = spec
            pod = {'apiVersion': 'v1', 'kind': 'Pod',
                   'metadata': {'name': row['name'], 'namespace': 'paib-gpu'},
                   'spec': {'containers': [{'name': 'main', 'image': 'tensorflow:latest',
                                            'imagePullPolicy': 'Always',
                                            'resources': {'requests': req,
                                                          'limits': dict(req)}}],
                            'restartPolicy': 'OnFailure', 'dnsPolicy': 'Default'}}
            if ann:
                pod['metadata']['annotations'] = ann
            if k:
                out.write('\n---\n\n')
            yaml.dump(pod, out)

ATTEMPT = re.compile(r'attempt to create pod\(paib-gpu/([^)]+)\)')
BOUND = re.compile(r'pod\(paib-gpu/([^)]+)\) is scheduled to node\(([0-9]+)-([^)]+)\)')
MILLI = re.compile(r'MilliGpu\s*:\s*([0-9.]+)%')

def parse_log(path):
    seq, where, prefix, headline = [], {}, {}, None
    with open(path, errors='replace') as f:
        for line in f:
            m = ATTEMPT.search(line)
            if m:
                seq.append(m.group(1))
                continue
            m = BOUND.search(line)
            if m:
                where[m.group(1)] = m.group(3)
                prefix[m.group(3)] = int(m.group(2))
                continue
            m = MILLI.search(line)
            if m:
                headline = float(m.group(1))
    return seq, where, prefix, headline

def base(name):
    return re.sub(r'-tuned-[0-9]+$', '', name)

def write_items(path, fields, byname, names):
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for name in names:
            r = dict(byname[base(name)])
            r['name'] = name
            w.writerow(r)

def replay(podcsv, nodecsv, log, items_out, orig_out, nodes_out, ref_out):
    seq, where, prefix, headline = parse_log(log)
    fields, pods = rows(podcsv)
    byname = {r['name']: r for r in pods}
    partial = headline is None
    if partial and seq:
        seq = seq[:-1]  # an unfinished run: its last pod may be in flight
    write_items(items_out, fields, byname, seq)
    # the listed pods alone, in the reference's order (its tuned copies come after them): the
    # typical pods ecosched builds from them are the reference's, which builds them from the
    # listed pods, not from its copies; an unfinished run's pods not reached yet follow in
    # file order (placed, not compared)
    orig = [n for n in seq if n == base(n)]
    seen = set(orig)
    write_items(orig_out, fields, byname, orig + [r['name'] for r in pods if r['name'] not in seen])
    nfields, nodes = rows(nodecsv)
    key = nfields[0]
    order = sorted(range(len(nodes)), key=lambda i: (nodes[i][key] not in prefix,
                                                     prefix.get(nodes[i][key], 0), i))
    with open(nodes_out, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=nfields)
        w.writeheader()
        for i in order:
            w.writerow(nodes[i])
    json.dump({'seq': seq, 'where': where, 'headline': headline, 'partial': partial,
               'unnamed_nodes': sum(1 for r in nodes if r[key] not in prefix)},
              open(ref_out, 'w'))

def alloc(seq, req, placed, cap_milli, pct):
    arrived = used = 0
    for name in seq:
        arrived += req[name]
        if arrived > pct / 100.0 * cap_milli:
            break
        if placed(name):
            used += req[name]
    return 100.0 * used / cap_milli

def compare(items, ref_json, assignment, orig_assignment, nodecsv, out):
    r = json.load(open(ref_json))
    _, its = rows(items)
    req = {x['name']: int(x['num_gpu']) * int(x.get('gpu_milli') or 1000) if int(x['num_gpu'])
           else 0 for x in its}
    _, nodes = rows(nodecsv)
    cap = 1000 * sum(int(n.get('gpu') or 0) for n in nodes)
    _, asg = rows(assignment)
    eco = {a['name']: a['node_name'] for a in asg if a['node_name']}
    seq, ref = r['seq'], r['where']
    _, oasg = rows(orig_assignment)
    logged = set(seq)
    orig = [a['name'] for a in oasg if a['name'] in logged]
    oeco = {a['name']: a['node_name'] for a in oasg if a['node_name']}
    diff = [k for k, n in enumerate(orig) if oeco.get(n) != ref.get(n)]
    fdiff = [k for k, n in enumerate(seq) if eco.get(n) != ref.get(n)]
    res = {'pods': len(orig), 'same_node': len(orig) - len(diff),
           'first_diff': diff[0] if diff else -1, 'all_pods': len(seq),
           'all_same_node': len(seq) - len(fdiff), 'all_first_diff': fdiff[0] if fdiff else -1,
           'headline': r['headline'], 'unnamed_nodes': r['unnamed_nodes'],
           'partial': r['partial']}
    for pct in (100, 130):
        res['eco%d' % pct] = alloc(seq, req, lambda n: n in eco, cap, pct)
        res['ref%d' % pct] = alloc(seq, req, lambda n: n in ref, cap, pct)
    json.dump(res, open(out, 'w'))

def table(results, families, policies):
    res = {}
    for p in results:
        try:
            d = json.load(open(p))
        except (OSError, ValueError):
            continue
        res[(d['family'], d['policy'])] = d
    for pct in (130, 100):
        print('\n**Allocated GPU share at %d %% of capacity**, ecosched / reference (difference),'
              ' %% of GPU capacity:\n' % pct)
        print('| pods | ' + ' | '.join(policies) + ' |')
        print('|---|' + '---|' * len(policies))
        for fam in families:
            cells = []
            for pol in policies:
                d = res.get((fam, pol))
                cells.append('-' if not d or d['partial'] else '%.1f / %.1f (%+.1f)' % (
                    d['eco%d' % pct], d['ref%d' % pct], d['eco%d' % pct] - d['ref%d' % pct]))
            print('| %s | %s |' % (fam, ' | '.join(cells)))
    print('\n**Same node, pod by pod**, the listed pods in the reference\'s order (typical pods '
          'identical): pods on the same node in both / pods (first differing pod, 0-based; -1: '
          'none); then all pods, tuned copies included (typical pods built from all of them '
          'here, from the listed ones in the reference):\n')
    print('| pods | ' + ' | '.join(policies) + ' |')
    print('|---|' + '---|' * len(policies))
    for fam in families:
        cells = []
        for pol in policies:
            d = res.get((fam, pol))
            cells.append('-' if not d else '%d / %d (first %d); all: %d / %d (first %d)' % (
                d['same_node'], d['pods'], d['first_diff'], d['all_same_node'],
                d['all_pods'], d['all_first_diff']))
        print('| %s | %s |' % (fam, ' | '.join(cells)))
    print('\nThe reference\'s own headline (MilliGpu of its final analysis, %):\n')
    print('| pods | ' + ' | '.join(policies) + ' |')
    print('|---|' + '---|' * len(policies))
    for fam in families:
        cells = []
        for pol in policies:
            d = res.get((fam, pol))
            cells.append('-' if not d or d['headline'] is None else '%.1f' % d['headline'])
        print('| %s | %s |' % (fam, ' | '.join(cells)))

if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'table':
        table(args[2:], args[0].split(), args[1].split())
    else:
        {'pods_yaml': pods_yaml, 'replay': replay, 'compare': compare}[cmd](*args)
EOF

node_yaml="$ref/data/node_yaml/openb_node_list_gpu_node.yaml"
[ -f "$node_yaml" ] || skip "$node_yaml is missing from the checkout"
nodecsv="$data/openb_node_list_gpu_node.csv.gz"

run_ref() { # family policy
    local fam=$1 pol=$2 in="$work/in/$1" exp="$work/exp/$1/$2"
    mkdir -p "$exp"
    if grep -q "Cluster Analysis Results" "$exp/log" 2>/dev/null ||
        { [ -n "${ALLOW_PARTIAL:-}" ] && [ -s "$exp/log" ]; }; then
        return 0
    fi
    # shellcheck disable=SC2046
    (cd "$ref" && python3 scripts/generate_config_and_run.py -d "$exp" -f "$in" \
        $(ref_flags "$pol") -tune 1.3 -tuneseed 42 --shuffle-pod=true >"$exp/config.out")
    local cc sc
    cc=$(ls "$exp"/cc_*.yaml)
    sc=$(ls "$exp"/sc_*.yaml)
    echo "crosscheck_fgd: reference $fam $pol" >&2
    (cd "$ref" && nice -n 10 "$simon" apply --extended-resources gpu -f "$cc" \
        --default-scheduler-config "$sc" >"$exp/log" 2>&1) || true
}

results=()
for fam in $FAMILIES; do
    pods="$data/openb_pod_list_$fam.csv.gz"
    [ -f "$pods" ] || { echo "crosscheck_fgd: no $pods, skipped" >&2; continue; }
    in="$work/in/$fam"
    mkdir -p "$in"
    cp "$node_yaml" "$in/"
    [ -s "$in/openb_pod_list_$fam.yaml" ] || python3 "$py" pods_yaml "$pods" "$in/openb_pod_list_$fam.yaml"
    n=0
    for pol in $policies; do
        ref_flags "$pol" >/dev/null || { echo "crosscheck_fgd: unknown policy $pol" >&2; exit 2; }
        run_ref "$fam" "$pol" &
        n=$((n + 1))
        if [ "$n" -ge "$jobs" ]; then
            wait
            n=0
        fi
    done
    wait
    for pol in $policies; do
        exp="$work/exp/$fam/$pol"
        grep -q "Cluster Analysis Results" "$exp/log" 2>/dev/null || [ -n "${ALLOW_PARTIAL:-}" ] ||
            { echo "crosscheck_fgd: reference $fam $pol did not finish (see $exp/log)" >&2; continue; }
        python3 "$py" replay "$pods" "$nodecsv" "$exp/log" "$exp/items.csv" "$exp/orig.csv" \
            "$exp/nodes.csv" "$exp/ref.json"
        for i in items orig; do
            "$eco" place --nodes "$exp/nodes.csv" --items "$exp/$i.csv" \
                --algo "$(eco_algo "$pol")" --seed 42 --out "$exp/eco-$i" >/dev/null
        done
        python3 "$py" compare "$exp/items.csv" "$exp/ref.json" "$exp/eco-items/assignment.csv" \
            "$exp/eco-orig/assignment.csv" "$exp/nodes.csv" "$exp/cmp.json"
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.update(family=sys.argv[2], policy=sys.argv[3]); json.dump(d, open(sys.argv[1], "w"))' \
            "$exp/cmp.json" "$fam" "$pol"
        results+=("$exp/cmp.json")
    done
done
[ "${#results[@]}" -gt 0 ] || { echo "crosscheck_fgd: no run finished" >&2; exit 1; }
python3 "$py" table "$FAMILIES" "$policies" "${results[@]}"
