# Prints each run's registration numbers (PostgreSQL): python3 summary.py [files…]; default: main-*.json branch-*.json here.
import glob, json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
files = sys.argv[1:] or sorted([f for f in glob.glob(os.path.join(here, '*-[0-9].json'))], key=lambda f: (os.path.basename(f).split('-')[-1], f))
for f in files:
    d = json.load(open(f))
    for target, t in d['targets'].items():
        s = t['sizes'][0]['setup']
        c, l = s['cost'], s['request_latency']
        trace = f.replace('.json', '.trace.json')
        notify = '-'
        if os.path.exists(trace) and target == 'allot-postgres':
            tr = json.load(open(trace))
            notify = sum(v['n'] for k, v in tr.items() if k.startswith('select pg_notify'))
        print(f"{os.path.basename(f):18} {target:15} stmts/req {c.get('sql_statements_per_op')!s:5} req/s {s['requests_per_s']:7.1f} p50/p99 {l['p50_ms']:6.1f}/{l['p99_ms']:6.1f} ms"
              f"  cpu ms/req allot {c['server_cpu_ms_per_op']} pg {c['db_cpu_ms_per_op']} client {c['client_cpu_ms_per_op']}  standalone pg_notify {notify}"
              f"  load {t['load_before']['load1']}-{t['load_after']['load1']}")
