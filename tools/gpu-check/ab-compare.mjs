#!/usr/bin/env node
// Compares the markdown reports of an alternated A/B (tools/gpu-check/ab.sh): per row, the median
// GPU ms of the base runs against the new runs, slowest change first, then a line per table.
//   node tools/gpu-check/ab-compare.mjs --base ab-base-1.md ab-base-2.md --new ab-new-1.md ab-new-2.md [--top 20]
import { readFileSync } from 'node:fs';

function rows(path) {
  const out = new Map();
  const seen = new Map();
  let section = '';
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3).trim();
    if (!line.startsWith('| ') || /^\| (table|kernel) \|/.test(line)) continue;
    const c = line
      .slice(1, -1)
      .split('|')
      .map((x) => x.trim());
    const roofline = /^(random|sequential)/.test(c[0]);
    const key = roofline ? `${section} | ${c[0]}` : `${section} | ${c.slice(0, 3).join(' ')}`;
    const ms = Number(roofline ? c[2] : c[4]);
    if (!Number.isFinite(ms)) continue;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    out.set(n > 1 ? `${key} #${n}` : key, ms);
  }
  return out;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const args = process.argv.slice(2);
const group = (flag) => {
  const at = args.indexOf(flag);
  const list = [];
  for (let i = at + 1; at >= 0 && i < args.length && !args[i].startsWith('--'); i++) list.push(args[i]);
  return list;
};
const base = group('--base').map(rows);
const next = group('--new').map(rows);
const top = Number(group('--top')[0] ?? 20);
if (base.length === 0 || next.length === 0) {
  console.error('usage: ab-compare.mjs --base FILE... --new FILE... [--top N]');
  process.exit(2);
}
const changes = [];
for (const key of base[0].keys()) {
  const b = base.map((r) => r.get(key)).filter((x) => x !== undefined);
  const n = next.map((r) => r.get(key)).filter((x) => x !== undefined);
  if (n.length === 0) continue;
  const bm = median(b);
  const nm = median(n);
  changes.push({ key, bm, nm, pct: ((nm - bm) / bm) * 100 });
}
changes.sort((a, b) => b.pct - a.pct);
console.log('| change | row (section, table, load, op) | base ms | new ms |');
console.log('| ---: | --- | ---: | ---: |');
for (const c of changes.slice(0, top))
  console.log(
    `| ${c.pct >= 0 ? '+' : ''}${c.pct.toFixed(1)}% | ${c.key} | ${Number(c.bm.toPrecision(4))} | ${Number(c.nm.toPrecision(4))} |`,
  );
const tables = new Map();
for (const c of changes) {
  const table = c.key.split(' | ')[1]?.split(' ')[0] ?? '';
  if (!tables.has(table)) tables.set(table, []);
  tables.get(table).push(c.pct);
}
console.log('\n| table | rows | geometric mean of new/base | slowest | fastest |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const [table, pcts] of tables) {
  const gm = Math.exp(pcts.reduce((s, p) => s + Math.log(1 + p / 100), 0) / pcts.length);
  const f = (p) => `${p >= 0 ? '+' : ''}${p.toFixed(1)}%`;
  console.log(`| ${table} | ${pcts.length} | ${gm.toFixed(4)} | ${f(Math.max(...pcts))} | ${f(Math.min(...pcts))} |`);
}
console.log(
  `\n${changes.length} rows; slower by more than 3%: ${changes.filter((c) => c.pct > 3).length}; faster by more than 3%: ${changes.filter((c) => c.pct < -3).length}`,
);
