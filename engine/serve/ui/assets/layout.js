// The layered layout of a DAG, drawn left to right (Sugiyama style, kept linear):
//   1. layers by longest path from the sources (sources then pulled next to what they feed);
//   2. edges longer than one layer get a chain of virtual nodes, so they run between nodes;
//   3. the order in each layer by barycenters, four sweeps (down, up, down, up), the nodes of a
//      group (a loop's body) kept together;
//   4. vertical positions pulled towards their neighbours, three sweeps, with minimum spacing
//      kept by a forward and a backward pass whose average is taken.
// Each pass is O(V + E) apart from the sort of each layer; no DOM here, so node tests it.

// layout takes nodes [{w, h, group}] (group: a string or '') and edges [{from, to}] (indices)
// and answers positions: x, y (top-left of each node), the route of each edge (a flat list of
// points x0, y0, x1, y1, …), the layers (node indices in order), width and height.
export function layout(nodes, edges, opt = {}) {
  const gapX = opt.gapX ?? 72;
  const gapY = opt.gapY ?? 18;
  const groupGap = opt.groupGap ?? 18;
  const margin = opt.margin ?? 24;
  const maxDummies = opt.maxDummies ?? Math.max(20000, nodes.length * 8);
  const n = nodes.length;

  // Adjacency in compressed rows: out edges and in edges by node.
  const outDeg = new Int32Array(n);
  const inDeg = new Int32Array(n);
  for (const e of edges) {
    if (e.from === e.to) continue;
    outDeg[e.from]++;
    inDeg[e.to]++;
  }
  const outStart = new Int32Array(n + 1);
  const inStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) { outStart[i + 1] = outStart[i] + outDeg[i]; inStart[i + 1] = inStart[i] + inDeg[i]; }
  const outAdj = new Int32Array(outStart[n]);
  const inAdj = new Int32Array(inStart[n]);
  {
    const oi = outStart.slice(0, n);
    const ii = inStart.slice(0, n);
    for (let k = 0; k < edges.length; k++) {
      const e = edges[k];
      if (e.from === e.to) continue;
      outAdj[oi[e.from]++] = e.to;
      inAdj[ii[e.to]++] = e.from;
    }
  }

  // 1. Longest-path layers (Kahn). A cycle (not expected from a DAG) is broken at its first node.
  const layer = new Int32Array(n);
  const seen = new Uint8Array(n);
  const topo = new Int32Array(n);
  const left = inDeg.slice();
  let head = 0;
  let tail = 0;
  for (let v = 0; v < n; v++) if (left[v] === 0) { topo[tail++] = v; seen[v] = 1; }
  let scan = 0;
  for (;;) {
    while (head < tail) {
      const v = topo[head++];
      for (let k = outStart[v]; k < outStart[v + 1]; k++) {
        const w = outAdj[k];
        if (seen[w]) continue;
        if (layer[v] + 1 > layer[w]) layer[w] = layer[v] + 1;
        if (--left[w] === 0) { topo[tail++] = w; seen[w] = 1; }
      }
    }
    if (tail >= n) break;
    while (seen[scan]) scan++;
    seen[scan] = 1;
    topo[tail++] = scan;
  }
  // Sources sit just before the first node they feed instead of all in the first column.
  for (let v = 0; v < n; v++) {
    if (inDeg[v] !== 0 || outDeg[v] === 0) continue;
    let min = Infinity;
    for (let k = outStart[v]; k < outStart[v + 1]; k++) min = Math.min(min, layer[outAdj[k]]);
    if (min - 1 > layer[v]) layer[v] = min - 1;
  }
  let L = 0;
  for (let v = 0; v < n; v++) if (layer[v] + 1 > L) L = layer[v] + 1;

  // 2. Virtual nodes on long edges. V = real + virtual; vs[] describe the virtual ones.
  let dummies = 0;
  for (const e of edges) {
    const span = layer[e.to] - layer[e.from];
    if (span > 1) dummies += span - 1;
  }
  const useDummies = dummies <= maxDummies;
  const V = n + (useDummies ? dummies : 0);
  const vLayer = new Int32Array(V);
  const vGroup = new Array(V);
  const vH = new Float64Array(V);
  const preds = new Array(V);
  const succs = new Array(V);
  for (let v = 0; v < V; v++) { preds[v] = []; succs[v] = []; }
  for (let v = 0; v < n; v++) { vLayer[v] = layer[v]; vGroup[v] = nodes[v].group || ''; vH[v] = nodes[v].h; }
  const chains = new Array(edges.length); // the virtual nodes of each edge
  const layers = [];
  for (let l = 0; l < L; l++) layers.push([]);
  let next = n;
  for (let t = 0; t < n; t++) {
    const v = topo[t];
    layers[layer[v]].push(v);
  }
  for (let k = 0; k < edges.length; k++) {
    const e = edges[k];
    const a = e.from;
    const b = e.to;
    if (a === b) continue;
    const span = layer[b] - layer[a];
    if (span <= 0) continue; // an edge against the layering (a cycle) is drawn but not laid out
    if (span === 1 || !useDummies) {
      preds[b].push(a);
      succs[a].push(b);
      continue;
    }
    const g = (vGroup[a] && vGroup[a] === vGroup[b]) ? vGroup[a] : '';
    const chain = [];
    let prev = a;
    for (let l = layer[a] + 1; l < layer[b]; l++) {
      const d = next++;
      vLayer[d] = l;
      vGroup[d] = g;
      vH[d] = 2;
      layers[l].push(d);
      preds[d].push(prev);
      succs[prev].push(d);
      chain.push(d);
      prev = d;
    }
    preds[b].push(prev);
    succs[prev].push(b);
    chains[k] = chain;
  }

  // 3. Order within layers: barycenter sweeps, a group's nodes kept together.
  const pos = new Float64Array(V);
  for (const ly of layers) for (let i = 0; i < ly.length; i++) pos[ly[i]] = i;
  const bary = new Float64Array(V);
  const key = new Float64Array(V);
  const orderLayer = (ly, nb) => {
    for (const v of ly) {
      const ns = nb[v];
      if (ns.length === 0) { bary[v] = pos[v]; continue; }
      let sum = 0;
      for (const u of ns) sum += pos[u];
      bary[v] = sum / ns.length;
    }
    let grouped = false;
    const gsum = new Map();
    for (const v of ly) {
      const g = vGroup[v];
      if (!g) { key[v] = bary[v]; continue; }
      grouped = true;
      const a = gsum.get(g);
      if (a) { a[0] += bary[v]; a[1]++; } else gsum.set(g, [bary[v], 1]);
    }
    if (grouped) for (const v of ly) if (vGroup[v]) { const a = gsum.get(vGroup[v]); key[v] = a[0] / a[1]; }
    ly.sort((a, b) => (key[a] - key[b]) || (vGroup[a] < vGroup[b] ? -1 : vGroup[a] > vGroup[b] ? 1 : 0) || (bary[a] - bary[b]) || (pos[a] - pos[b]));
    for (let i = 0; i < ly.length; i++) pos[ly[i]] = i;
  };
  for (let sweep = 0; sweep < 4; sweep++) {
    if (sweep % 2 === 0) for (let l = 1; l < L; l++) orderLayer(layers[l], preds);
    else for (let l = L - 2; l >= 0; l--) orderLayer(layers[l], succs);
  }

  // 4. Coordinates: columns by layer; vertical centres pulled towards neighbours.
  const colW = new Float64Array(L);
  for (let v = 0; v < n; v++) colW[layer[v]] = Math.max(colW[layer[v]], nodes[v].w);
  const colX = new Float64Array(L);
  let x = margin;
  for (let l = 0; l < L; l++) {
    if (colW[l] === 0) colW[l] = 16;
    colX[l] = x;
    x += colW[l] + gapX;
  }
  const cy = new Float64Array(V);
  const sep = (a, b) => {
    const ra = a >= n;
    const rb = b >= n;
    let s = (vH[a] + vH[b]) / 2 + ((ra && rb) ? 6 : (ra || rb) ? gapY / 2 : gapY);
    if (vGroup[a] !== vGroup[b] && (vGroup[a] || vGroup[b])) s += groupGap * 2;
    return s;
  };
  for (const ly of layers) {
    let y = 0;
    for (let i = 0; i < ly.length; i++) {
      if (i > 0) y += sep(ly[i - 1], ly[i]);
      cy[ly[i]] = y;
    }
    for (const v of ly) cy[v] -= y / 2;
  }
  const fwd = [];
  const bwd = [];
  const want = [];
  const place = (ly, nb1, nb2) => {
    const k = ly.length;
    if (k === 0) return;
    for (let i = 0; i < k; i++) {
      const v = ly[i];
      let sum = 0;
      let c = 0;
      for (const u of nb1[v]) { sum += cy[u]; c++; }
      if (nb2) for (const u of nb2[v]) { sum += cy[u]; c++; }
      want[i] = c ? sum / c : cy[v];
    }
    fwd[0] = want[0];
    for (let i = 1; i < k; i++) fwd[i] = Math.max(want[i], fwd[i - 1] + sep(ly[i - 1], ly[i]));
    bwd[k - 1] = want[k - 1];
    for (let i = k - 2; i >= 0; i--) bwd[i] = Math.min(want[i], bwd[i + 1] - sep(ly[i], ly[i + 1]));
    for (let i = 0; i < k; i++) cy[ly[i]] = (fwd[i] + bwd[i]) / 2;
  };
  for (let l = 1; l < L; l++) place(layers[l], preds);
  for (let l = L - 2; l >= 0; l--) place(layers[l], succs);
  for (let l = 0; l < L; l++) place(layers[l], preds, succs);

  // Shift everything below the margin (room above for group titles).
  let minY = Infinity;
  let maxY = -Infinity;
  for (let v = 0; v < V; v++) {
    const top = cy[v] - vH[v] / 2 - (vGroup[v] ? groupGap + 14 : 0);
    const bottom = cy[v] + vH[v] / 2 + (vGroup[v] ? groupGap : 0);
    if (top < minY) minY = top;
    if (bottom > maxY) maxY = bottom;
  }
  if (V === 0) { minY = 0; maxY = 0; }
  const shift = margin - minY;
  for (let v = 0; v < V; v++) cy[v] += shift;

  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  for (let v = 0; v < n; v++) {
    const l = layer[v];
    xs[v] = colX[l] + (colW[l] - nodes[v].w) / 2;
    ys[v] = cy[v] - nodes[v].h / 2;
  }

  // Routes: from a node's right side, through the columns of its virtual nodes, to the next
  // node's left side.
  const routes = new Array(edges.length);
  for (let k = 0; k < edges.length; k++) {
    const e = edges[k];
    const a = e.from;
    const b = e.to;
    const pts = [xs[a] + nodes[a].w, cy[a]];
    const chain = chains[k];
    if (chain) {
      for (const d of chain) {
        const l = vLayer[d];
        pts.push(colX[l] - 4, cy[d], colX[l] + colW[l] + 4, cy[d]);
      }
    }
    pts.push(xs[b], cy[b]);
    routes[k] = pts;
  }

  const realLayers = layers.map((ly) => ly.filter((v) => v < n));
  return {
    x: xs, y: ys, routes, layers: realLayers, layerOf: layer,
    width: Math.max(x - gapX + margin, 2 * margin), height: Math.max(maxY - minY + 2 * margin, 2 * margin),
  };
}
