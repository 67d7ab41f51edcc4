#!/bin/sh
# SPDX-License-Identifier: MIT
# The layout's include rules (CONTRIBUTING.md, "Layout"): the core (src/core/, and its public
# headers in include/ecosched/) includes only core headers and the C library; every edge module
# (src/util, src/platform, src/sim, src/place, src/cli, src/daemon, src/slurm) keeps its headers
# beside its sources; and the graph of which module includes which has no cycle.
set -u
SRC="$2"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found (apt-get install python3)"; exit 77; }
exec python3 - "$SRC" <<'PY'
import os, re, sys
src = sys.argv[1]
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
def module(path):
    rel = os.path.relpath(path, src)
    parts = rel.split(os.sep)
    if parts[0] == 'include':
        return 'core'
    if parts[0] == 'src' and len(parts) > 2:
        return parts[1]
    return None
files = []
for top in ('src', 'include'):
    for d, _, fs in os.walk(os.path.join(src, top)):
        files += [os.path.join(d, f) for f in fs if f.endswith(('.c', '.h'))]
errors, edges = [], {}
for f in sorted(files):
    m = module(f)
    for n, line in enumerate(open(f, encoding='utf-8', errors='replace'), 1):
        g = inc.match(line)
        if not g:
            continue
        name = g.group(1)
        cands = [os.path.join(os.path.dirname(f), name), os.path.join(src, 'include', name),
                 os.path.join(src, 'src', name)]
        hit = next((c for c in cands if os.path.isfile(c)), None)
        where = '%s:%d' % (os.path.relpath(f, src), n)
        if hit is None:
            if not name.endswith('.html'):
                errors.append('%s: "%s" not found beside the file, in include/ or in src/' % (where, name))
            continue
        hm = module(hit)
        if m == 'core' and hm != 'core':
            errors.append('%s: the core includes the %s module\'s "%s"' % (where, hm, name))
        if hm and hm != m:
            edges.setdefault(m, {}).setdefault(hm, where)
# edge headers in include/ecosched: a public header that no core file implements or uses
core_names = set()
for f in files:
    if module(f) == 'core' and f.endswith('.c'):
        for line in open(f, encoding='utf-8', errors='replace'):
            g = inc.match(line)
            if g:
                core_names.add(os.path.basename(g.group(1)))
for h in sorted(os.listdir(os.path.join(src, 'include', 'ecosched'))):
    if h.endswith('.h') and h not in core_names:
        errors.append('include/ecosched/%s: not used by any core source (an edge header belongs beside its code)' % h)
# cycles in the module graph
state, stack = {}, []
def visit(a):
    state[a] = 1
    stack.append(a)
    for b in sorted(edges.get(a, {})):
        if state.get(b) == 1:
            cyc = stack[stack.index(b):] + [b]
            errors.append('include cycle between modules: ' + ' -> '.join(
                '%s (%s)' % (x, edges[x][y]) for x, y in zip(cyc, cyc[1:])))
        elif not state.get(b):
            visit(b)
    stack.pop()
    state[a] = 2
for a in sorted(edges):
    if not state.get(a):
        visit(a)
for e in errors:
    print('FAIL: ' + e)
print('include_layers: %d modules, %d module edges, %d problems' %
      (len(set(edges) | {b for a in edges for b in edges[a]}),
       sum(len(v) for v in edges.values()), len(errors)))
sys.exit(1 if errors else 0)
PY
