// Checks of the DAG layout (assets/layout.js), run by layout_test.go with node. Exits 1 with a
// message naming the case and the broken property.
import { layout } from '../assets/layout.js';

let failed = 0;
function check(name, cond, msg) {
  if (!cond) { failed++; console.error(`${name}: ${msg}`); }
}

// verify checks the properties every layout must have.
function verify(name, nodes, edges) {
  const r = layout(nodes, edges);
  const n = nodes.length;
  check(name, r.x.length === n && r.y.length === n, 'a position for every node');
  for (const [k, e] of edges.entries()) {
    if (e.from === e.to) continue;
    const back = r.layerOf[e.to] <= r.layerOf[e.from];
    if (!back) check(name, r.x[e.to] > r.x[e.from] + nodes[e.from].w - 1, `edge ${e.from}->${e.to} does not go left to right`);
    const p = r.routes[k];
    check(name, Math.abs(p[0] - (r.x[e.from] + nodes[e.from].w)) < 0.5 && Math.abs(p[1] - (r.y[e.from] + nodes[e.from].h / 2)) < 0.5, `edge ${k} does not start at its source's right side`);
    check(name, Math.abs(p[p.length - 2] - r.x[e.to]) < 0.5 && Math.abs(p[p.length - 1] - (r.y[e.to] + nodes[e.to].h / 2)) < 0.5, `edge ${k} does not end at its target's left side`);
  }
  const seen = new Set();
  for (const [l, ly] of r.layers.entries()) {
    for (let i = 0; i < ly.length; i++) {
      const v = ly[i];
      seen.add(v);
      check(name, r.layerOf[v] === l, `node ${v} listed in layer ${l} but in ${r.layerOf[v]}`);
      if (i > 0) {
        const u = ly[i - 1];
        check(name, r.y[v] >= r.y[u] + nodes[u].h - 0.01, `nodes ${u} and ${v} overlap in layer ${l}`);
      }
    }
    // A group's members are next to each other in a layer.
    const groupsIn = ly.map((v) => nodes[v].group || '');
    for (const g of new Set(groupsIn.filter(Boolean))) {
      const first = groupsIn.indexOf(g);
      const last = groupsIn.lastIndexOf(g);
      check(name, groupsIn.slice(first, last + 1).every((x) => x === g), `group ${g} is split in layer ${l}`);
    }
  }
  check(name, seen.size === n, `${seen.size} of ${n} nodes in the layers`);
  for (let v = 0; v < n; v++) {
    check(name, r.x[v] >= 0 && r.y[v] >= 0 && r.x[v] + nodes[v].w <= r.width + 0.01 && r.y[v] + nodes[v].h <= r.height + 0.01, `node ${v} outside the drawing`);
  }
  return r;
}

const box = (group = '') => ({ w: 150, h: 50, group });

// A chain: one node per layer, in order.
{
  const nodes = [box(), box(), box(), box()];
  const edges = [{ from: 0, to: 1 }, { from: 1, to: 2 }, { from: 2, to: 3 }];
  const r = verify('chain', nodes, edges);
  check('chain', r.layers.length === 4, `${r.layers.length} layers, want 4`);
}

// Longest path: a node waits for its longest chain of upstream nodes.
{
  const nodes = [box(), box(), box(), box()];
  const edges = [{ from: 0, to: 1 }, { from: 1, to: 2 }, { from: 0, to: 3 }, { from: 2, to: 3 }];
  const r = verify('longest path', nodes, edges);
  check('longest path', r.layerOf[3] === 3, `node 3 in layer ${r.layerOf[3]}, want 3`);
}

// A source feeding a late node sits just before it, not in the first column.
{
  const nodes = [box(), box(), box(), box()];
  const edges = [{ from: 0, to: 1 }, { from: 1, to: 2 }, { from: 3, to: 2 }];
  const r = verify('late source', nodes, edges);
  check('late source', r.layerOf[3] === 1, `source 3 in layer ${r.layerOf[3]}, want 1`);
}

// crossings counts the pairs of edges between the same two layers that cross.
function crossings(r, edges) {
  const near = edges.filter((e) => r.layerOf[e.to] === r.layerOf[e.from] + 1);
  let c = 0;
  for (let i = 0; i < near.length; i++) {
    for (let j = i + 1; j < near.length; j++) {
      const a = near[i];
      const b = near[j];
      if (r.layerOf[a.from] !== r.layerOf[b.from]) continue;
      if (Math.sign(r.y[a.from] - r.y[b.from]) * Math.sign(r.y[a.to] - r.y[b.to]) < 0) c++;
    }
  }
  return c;
}

// Barycenter sweeps undo a crossing that the first order (topological) has.
{
  const nodes = [box(), box(), box(), box(), box(), box()];
  const edges = [{ from: 3, to: 4 }, { from: 2, to: 3 }, { from: 1, to: 5 }, { from: 2, to: 5 }];
  const r = verify('crossing', nodes, edges);
  check('crossing', crossings(r, edges) === 0, `${crossings(r, edges)} crossings, want 0`);
}

// A group (a loop's body) stays together next to nodes outside it.
{
  const nodes = [box(), box('loop.l'), box(), box('loop.l'), box(), box('loop.l')];
  const edges = [{ from: 0, to: 1 }, { from: 0, to: 2 }, { from: 0, to: 3 }, { from: 0, to: 4 }, { from: 0, to: 5 }];
  verify('group', nodes, edges);
}

// A cycle (never from a valid workflow) is drawn, not looped on.
verify('cycle', [box(), box(), box()], [{ from: 0, to: 1 }, { from: 1, to: 2 }, { from: 2, to: 0 }]);
verify('self edge', [box(), box()], [{ from: 0, to: 0 }, { from: 0, to: 1 }]);
verify('empty', [], []);

// 1,000 nodes: a random DAG with long edges and a group.
{
  let seed = 7;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const nodes = [];
  const edges = [];
  for (let i = 0; i < 1000; i++) nodes.push({ w: 120 + (i % 5) * 20, h: 50 + (i % 2) * 12, group: i > 500 && i < 540 ? 'loop.big' : '' });
  for (let i = 1; i < 1000; i++) {
    const k = 1 + Math.floor(rnd() * 2);
    for (let j = 0; j < k; j++) edges.push({ from: Math.floor(rnd() * i), to: i });
  }
  const seenPair = new Set();
  const unique = edges.filter((e) => { const key = `${e.from},${e.to}`; if (seenPair.has(key)) return false; seenPair.add(key); return true; });
  verify('1,000 nodes', nodes, unique);
}

if (failed) {
  console.error(`${failed} layout checks failed`);
  process.exit(1);
}
console.log('layout: every check passed');
