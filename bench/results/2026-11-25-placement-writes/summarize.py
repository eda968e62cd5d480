# Prints the before/after table of this directory's runs (python3 summarize.py).
import glob, json, os
here = os.path.dirname(os.path.abspath(__file__))
steps = ['claim_write_path', 'migration_swap', 'deletes']
for target in ['allot-sqlite', 'allot-postgres']:
    print(f'== {target}: ops/s at C=1 / 8 / 32 (SQL statements per op at C=8)')
    for f in sorted(glob.glob(os.path.join(here, '*-[0-9].json'))):
        d = json.load(open(f))
        r = d['targets'].get(target)
        if not r:
            continue
        cells = []
        for s in steps:
            rows = r.get(s, [])
            rates = ' / '.join(f"{x['ops_per_s']:.0f}" for x in rows)
            stm = next((x['cost'].get('sql_statements_per_op') for x in rows if x['concurrency'] == 8), None)
            cells.append(f'{s} {rates} ({stm})')
        print(f"  {os.path.basename(f)[:-5]:9} " + ' | '.join(cells))
