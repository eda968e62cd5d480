// node stmt.mjs DBFILE BASE_TREE NEW_TREE: CPU of a full load's chunk statements on SQLite (chunks of 10 000) on this
// thread, the two builds' texts (from their dist/) interleaved, 5 rounds; and the characters they return.
import { createRequire } from 'node:module';
const [file, baseTree, newTree] = process.argv.slice(2);
const require = createRequire(`${newTree}/package.json`);
const Database = require('better-sqlite3');
const db = new Database(file, { readonly: true });
const texts = {};
for (const [name, root] of [['base', baseTree], ['new', newTree]]) {
  const { readProviders } = await import(`${root}/dist/placement/store/provider-rows.js`);
  const reader = { one: async (sql, params) => { texts[name] = { sql, params }; return undefined; }, close: async () => {} };
  await readProviders({ dialect: 'sqlite' }, { after: 0, size: 10000 }, reader);
}
const out = {};
for (let round = 0; round < 5; round++)
  for (const [name, { sql }] of Object.entries(texts)) {
    const st = db.prepare(sql);
    const c0 = process.cpuUsage();
    let chars = 0;
    for (let after = 0; ; ) {
      const params = name === 'base' ? [after, 9999, ...Array(4).fill([after, after, 9999]).flat()] : [after, 9999, after, after, after, after];
      const r = st.get(...params);
      chars += (r.providers?.length ?? 0) + (r.inventories?.length ?? 0) + (r.traits?.length ?? 0);
      if (Number(r.up_to) === Number.MAX_SAFE_INTEGER) break;
      after = Number(r.up_to);
    }
    const c = process.cpuUsage(c0);
    (out[name] ??= []).push(Math.round((c.user + c.system) / 1000));
    out[name + '_chars'] = chars;
  }
console.log(JSON.stringify(out));
