// node compare.mjs TREE_A TREE_B URL: the two builds' full loads hold the same providers, field by field
const [a, b, url] = process.argv.slice(2);
const load = async (root) => {
  const { openDatabase } = await import(`${root}/dist/db/open.js`);
  const { NameCache } = await import(`${root}/dist/placement/store/names.js`);
  const { ProviderIndex } = await import(`${root}/dist/placement/store/provider-index.js`);
  const db = await openDatabase(url);
  const index = new ProviderIndex(db, new NameCache(), { reloadMs: 600000 });
  await index.load(() => {});
  const out = new Map();
  for (const p of index.providers.values()) {
    const inv = Array.from(p.inventories.subarray(p.inventoryStart, p.inventoryStart + p.classes.length * 7));
    out.set(p.id, JSON.stringify([p.id, p.uuid, p.generation, p.parentId, p.rootId, p.classes, inv, [...p.traits], [...p.aggregates]]));
  }
  const anchors = JSON.stringify([...index.sharingAnchors]);
  await index.close(); await db.close();
  return { out, anchors };
};
const A = await load(a), B = await load(b);
let diff = 0;
for (const [id, v] of A.out) if (B.out.get(id) !== v) { if (diff++ < 3) console.log('differs', v, B.out.get(id)); }
console.log(JSON.stringify({ providers: A.out.size, sameCount: A.out.size === B.out.size, differing: diff, anchorsSame: A.anchors === B.anchors }));
