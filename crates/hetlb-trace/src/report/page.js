"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const data = JSON.parse(document.getElementById("data").textContent);
  const tip = document.getElementById("tip");

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, anchor, extra) {
    const t = el("text", Object.assign({ x: x, y: y, "text-anchor": anchor || "start" }, extra || {}), parent);
    t.textContent = s;
    return t;
  }
  function hover(e, label) {
    e.addEventListener("mousemove", function (ev) {
      tip.textContent = label;
      tip.style.display = "block";
      tip.style.left = (ev.clientX + 12) + "px";
      tip.style.top = (ev.clientY + 12) + "px";
    });
    e.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  }
  function colour(i, n) {
    const h = Math.round((i * 360) / Math.max(n, 1) + 210) % 360;
    return "hsl(" + h + ",62%,45%)";
  }
  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
    if (a < 1) return Number(v.toPrecision(3)).toString();
    return (Math.round(v * 1000) / 1000).toString();
  }
  function hide(id) { document.getElementById(id).classList.add("hidden"); }
  function width(id) {
    const w = document.getElementById(id).clientWidth;
    return Math.max(320, w || 800);
  }
  function svgIn(id, w, h) {
    const box = document.getElementById(id);
    box.textContent = "";
    return el("svg", { width: w, height: h, viewBox: "0 0 " + w + " " + h, role: "img" }, box);
  }
  function extent(values, pad) {
    let lo = Infinity, hi = -Infinity;
    for (const v of values) if (v !== null && v !== undefined && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (lo === hi) { lo -= 0.5; hi += 0.5; }
    if (pad) { lo = Math.min(lo, 0); }
    return [lo, hi];
  }
  function scale(d, r) { return function (v) { return r[0] + ((v - d[0]) / (d[1] - d[0])) * (r[1] - r[0]); }; }
  function ticks(d, n) {
    const step0 = (d[1] - d[0]) / n, mag = Math.pow(10, Math.floor(Math.log10(step0)));
    const step = [1, 2, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return s >= step0; });
    const out = [];
    for (let v = Math.ceil(d[0] / step) * step; v <= d[1] + step * 1e-9; v += step) out.push(v);
    return out;
  }
  // Axes and grid of a plot area; returns the scales.
  function frame(svg, w, h, xd, yd, xLabel, yLabel, noXTicks) {
    const m = { l: 64, r: 16, t: 10, b: 40 };
    const x = scale(xd, [m.l, w - m.r]), y = scale(yd, [h - m.b, m.t]);
    const g = el("g", { class: "grid" }, svg), a = el("g", { class: "axis" }, svg);
    for (const v of ticks(yd, 5)) {
      el("line", { x1: m.l, x2: w - m.r, y1: y(v), y2: y(v) }, g);
      text(a, m.l - 6, y(v) + 4, fmt(v), "end");
    }
    if (!noXTicks) for (const v of ticks(xd, 8)) text(a, x(v), h - m.b + 16, fmt(v), "middle");
    el("line", { x1: m.l, x2: w - m.r, y1: h - m.b, y2: h - m.b }, a);
    el("line", { x1: m.l, x2: m.l, y1: m.t, y2: h - m.b }, a);
    text(a, (m.l + w - m.r) / 2, h - 6, xLabel, "middle");
    text(a, 14, (m.t + h - m.b) / 2, yLabel, "middle", { transform: "rotate(-90 14 " + (m.t + h - m.b) / 2 + ")" });
    return { x: x, y: y, m: m };
  }
  function legend(id, labels) {
    const box = document.getElementById(id);
    const p = document.createElement("div");
    p.className = "legend";
    labels.forEach(function (l, i) {
      const s = document.createElement("span");
      s.style.marginRight = "14px";
      s.style.whiteSpace = "nowrap";
      s.style.display = "inline-block";
      const dot = document.createElement("span");
      dot.textContent = "■ ";
      dot.style.color = colour(i, labels.length);
      s.appendChild(dot);
      s.appendChild(document.createTextNode(l));
      p.appendChild(s);
    });
    box.appendChild(p);
  }
  function path(points, x, y) {
    let d = "", pen = false;
    for (const p of points) {
      if (p[1] === null || p[1] === undefined || !isFinite(p[1])) { pen = false; continue; }
      d += (pen ? "L" : "M") + x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1);
      pen = true;
    }
    return d;
  }
  function lineChart(id, lines, xLabel, yLabel) {
    const w = width(id), h = 300;
    const xs = [], ys = [];
    lines.forEach(function (l) { l.points.forEach(function (p) { xs.push(p[0]); ys.push(p[1]); }); });
    const svg = svgIn(id, w, h);
    const f = frame(svg, w, h, extent(xs), extent(ys), xLabel, yLabel);
    lines.forEach(function (l, i) {
      const c = colour(i, lines.length);
      el("path", { d: path(l.points, f.x, f.y), fill: "none", stroke: c, "stroke-width": 1.8, class: "series" }, svg);
      const every = Math.max(1, Math.ceil(l.points.length / 120));
      l.points.forEach(function (p, k) {
        if (k % every) return;
        const dot = el("circle", { cx: f.x(p[0]), cy: f.y(p[1]), r: 2.5, fill: c, class: "mark" }, svg);
        hover(dot, l.label + "\n" + xLabel + " " + fmt(p[0]) + "\n" + yLabel + " " + fmt(p[1]));
      });
    });
    if (lines.length > 1) legend(id, lines.map(function (l) { return l.label; }));
  }
  function bandsChart(id, b, xLabel) {
    const w = width(id), h = 340, n = b.labels.length;
    const ys = [];
    b.max.forEach(function (r) { r.forEach(function (v) { ys.push(v); }); });
    b.min.forEach(function (r) { r.forEach(function (v) { ys.push(v); }); });
    const svg = svgIn(id, w, h);
    const f = frame(svg, w, h, extent(b.x), extent(ys, true), xLabel, "load (units)");
    b.labels.forEach(function (label, i) {
      const c = colour(i, n);
      const top = b.x.map(function (x, k) { return [x, b.max[i][k]]; });
      const bottom = b.x.map(function (x, k) { return [x, b.min[i][k]]; }).reverse();
      const banded = b.mean[i].some(function (v, k) { return v !== null && b.max[i][k] !== b.min[i][k]; });
      if (banded) {
        const d = path(top, f.x, f.y) + path(bottom, f.x, f.y).replace(/^M/, "L") + "Z";
        el("path", { d: d, fill: c, "fill-opacity": 0.12, stroke: "none" }, svg);
      }
      const line = el("path", { d: path(b.x.map(function (x, k) { return [x, b.mean[i][k]]; }), f.x, f.y), fill: "none", stroke: c, "stroke-width": 1.6, class: "series" }, svg);
      const last = b.mean[i].length - 1;
      hover(line, label + "\nlast mean " + fmt(b.mean[i][last]) + " (min " + fmt(b.min[i][last]) + ", max " + fmt(b.max[i][last]) + ")");
    });
    legend(id, b.labels);
  }
  function heatChart(id, hm) {
    const rows = hm.rows.length, cols = hm.cols.length;
    const w = width(id), lw = 96, cw = Math.max(2, (w - lw - 20) / Math.max(cols, 1));
    const rh = Math.max(3, Math.min(22, Math.floor(560 / Math.max(rows, 1))));
    const h = rows * rh + 44;
    const svg = svgIn(id, w, h);
    const all = [];
    hm.values.forEach(function (r) { r.forEach(function (v) { if (v !== null) all.push(v); }); });
    const d = extent(all);
    hm.values.forEach(function (r, i) {
      if (rows <= 40 || i % Math.ceil(rows / 40) === 0) text(svg, lw - 6, 10 + i * rh + rh / 2 + 4, hm.rows[i], "end");
      r.forEach(function (v, j) {
        const t = v === null ? 0 : (v - d[0]) / (d[1] - d[0]);
        const fill = v === null ? "#f0f2f4" : "hsl(" + (220 - 200 * t) + ",75%," + (88 - 45 * t) + "%)";
        const cell = el("rect", { x: lw + j * cw, y: 10 + i * rh, width: Math.max(1, cw - 0.5), height: Math.max(1, rh - 0.5), fill: fill, class: "cell" }, svg);
        hover(cell, hm.rows[i] + ", " + hm.cols[j] + "\n" + fmt(v));
      });
    });
    const every = Math.max(1, Math.ceil(cols / 12));
    hm.cols.forEach(function (c, j) { if (j % every === 0) text(svg, lw + j * cw + cw / 2, h - 14, c, "middle"); });
    text(svg, w - 4, h - 2, "low " + fmt(d[0]) + " → high " + fmt(d[1]), "end");
  }
  function matrixChart(id, mx) {
    const n = mx.labels.length, w = width(id), lw = 96;
    const side = Math.min(w - lw - 10, Math.max(120, n * 26));
    const c = side / n, h = side + lw;
    const svg = svgIn(id, w, h);
    let hi = 0;
    mx.units.forEach(function (r) { r.forEach(function (v) { hi = Math.max(hi, v); }); });
    mx.units.forEach(function (r, i) {
      if (n <= 32) text(svg, lw - 6, lw + i * c + c / 2 + 4, mx.labels[i], "end");
      r.forEach(function (v, j) {
        const t = hi > 0 ? v / hi : 0;
        const cell = el("rect", { x: lw + j * c, y: lw + i * c, width: c - 1, height: c - 1, fill: v > 0 ? "hsl(16,80%," + (90 - 50 * t) + "%)" : "#f3f5f7", class: "cell" }, svg);
        hover(cell, mx.labels[i] + " → " + mx.labels[j] + "\n" + fmt(v) + " units");
      });
    });
    mx.labels.forEach(function (l, j) {
      if (n <= 32) text(svg, lw + j * c + c / 2, lw - 6, l, "start", { transform: "rotate(-60 " + (lw + j * c + c / 2) + " " + (lw - 6) + ")" });
    });
    text(svg, 4, 14, "row: sender, column: receiver");
  }
  function arrowsChart(id, mx) {
    const n = mx.labels.length, w = width(id), h = 340, base = h / 2;
    const svg = svgIn(id, w, h);
    const defs = el("defs", {}, svg);
    [["up", "#c2410c"], ["down", "#2563eb"]].forEach(function (m) {
      const mk = el("marker", { id: "head-" + m[0], viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" }, defs);
      el("path", { d: "M0,0L10,5L0,10Z", fill: m[1] }, mk);
    });
    const x = function (i) { return 30 + (i + 0.5) * ((w - 60) / n); };
    let hi = 0;
    mx.units.forEach(function (r) { r.forEach(function (v) { hi = Math.max(hi, v); }); });
    mx.units.forEach(function (r, i) {
      r.forEach(function (v, j) {
        if (!(v > 0) || i === j) return;
        const x1 = x(i), x2 = x(j), up = i < j ? -1 : 1;
        const rise = Math.min(base - 24, Math.abs(x2 - x1) * 0.5 + 14);
        const d = "M" + x1 + "," + base + " Q" + (x1 + x2) / 2 + "," + (base + up * 2 * rise) + " " + x2 + "," + base;
        const arc = el("path", { d: d, fill: "none", stroke: up < 0 ? "#c2410c" : "#2563eb", "stroke-opacity": 0.65, "stroke-width": 1 + 5 * (v / hi), "marker-end": "url(#head-" + (up < 0 ? "up" : "down") + ")", class: "arc" }, svg);
        hover(arc, mx.labels[i] + " → " + mx.labels[j] + "\n" + fmt(v) + " units");
      });
    });
    el("line", { x1: 20, x2: w - 20, y1: base, y2: base, stroke: "#c9d1d9" }, svg);
    const longest = Math.max.apply(null, mx.labels.map(function (l) { return l.length; }));
    const labelEvery = Math.max(1, Math.ceil((n * (longest * 7 + 8)) / (w - 60)));
    for (let i = 0; i < n; i++) {
      el("circle", { cx: x(i), cy: base, r: 4, fill: "#1d232a" }, svg);
      if (i % labelEvery === 0) text(svg, x(i), base + 4, mx.labels[i], "middle", { dy: "1.2em", "paint-order": "stroke", stroke: "#fff", "stroke-width": 3 });
    }
    text(svg, 4, 14, "arcs above (orange): to a higher rank; below (blue): to a lower one; width: units");
  }
  function decisionsChart(id, ds, xLabel) {
    const w = width(id), h = 300;
    const xs = ds.map(function (d) { return d.x; });
    const ys = [];
    ds.forEach(function (d) { ys.push(d.gain); ys.push(d.cost); });
    const svg = svgIn(id, w, h);
    const f = frame(svg, w, h, extent(xs), extent(ys, true), xLabel, "seconds");
    ds.forEach(function (d) {
      if (d.gain !== null && d.gain !== undefined) {
        const c = el("circle", { cx: f.x(d.x), cy: f.y(d.gain), r: 4.5, fill: d.held ? "#fff" : "#15803d", stroke: "#15803d", "stroke-width": 1.5, class: "mark" }, svg);
        hover(c, (d.held ? "held back" : "moved") + " at " + fmt(d.x) + "\npredicted gain " + fmt(d.gain) + " s\ncost " + fmt(d.cost) + " s");
      }
      if (d.cost !== null && d.cost !== undefined) {
        const s = el("rect", { x: f.x(d.x) - 3.5, y: f.y(d.cost) - 3.5, width: 7, height: 7, fill: "#b91c1c", class: "mark" }, svg);
        hover(s, "predicted cost " + fmt(d.cost) + " s");
      }
    });
    const held = ds.filter(function (d) { return d.held; }).length;
    text(svg, w - 20, 20, ds.length + " decisions, " + held + " held back", "end");
  }
  function barsChart(id, sc) {
    const w = width(id), h = 320, n = sc.nodes.length;
    const per = Math.ceil(n / 64), groups = [];
    for (let i = 0; i < n; i += per) {
      const last = Math.min(n, i + per) - 1;
      const mean = function (v) { let s = 0; for (let k = i; k <= last; k++) s += v[k]; return s / (last - i + 1); };
      groups.push({ label: per === 1 ? sc.nodes[i] : "nodes " + i + "–" + last, sim: mean(sc.simulated), meas: mean(sc.measured) });
    }
    const svg = svgIn(id, w, h);
    const ys = [];
    groups.forEach(function (g) { ys.push(g.sim); ys.push(g.meas); });
    const f = frame(svg, w, h, [0, groups.length], extent(ys, true), "node", "finish (s)", true);
    const bw = (f.x(1) - f.x(0)) * 0.4;
    const every = Math.max(1, Math.ceil(groups.length / 16));
    groups.forEach(function (g, i) {
      if (i % every === 0) text(svg, f.x(i + 0.5), h - f.m.b + 16, g.label, "middle");
      [["simulated", g.sim, "#2563eb", 0], ["measured", g.meas, "#ea580c", 1]].forEach(function (b) {
        const y = f.y(b[1]), y0 = f.y(0);
        const r = el("rect", { x: f.x(i) + bw * 0.25 + b[3] * bw, y: Math.min(y, y0), width: bw, height: Math.max(1, Math.abs(y0 - y)), fill: b[2], class: "bar" }, svg);
        hover(r, g.label + "\n" + b[0] + " " + fmt(b[1]) + " s");
      });
    });
    const box = document.getElementById(id);
    const p = document.createElement("div");
    p.textContent = "blue: simulated, orange: measured";
    box.appendChild(p);
  }

  // The summary and notes.
  const table = document.getElementById("summary");
  data.summary.forEach(function (r) {
    const tr = document.createElement("tr");
    r.forEach(function (c) { const td = document.createElement("td"); td.textContent = c; tr.appendChild(td); });
    table.appendChild(tr);
  });
  const notes = document.getElementById("notes");
  data.notes.forEach(function (n) { const li = document.createElement("li"); li.textContent = n; notes.appendChild(li); });

  function draw() {
    if (data.imbalance.length) lineChart("chart-imbalance", data.imbalance, data.x_label, "imbalance"); else hide("sec-imbalance");
    if (data.load) {
      document.getElementById("what-load").textContent = data.load.labels.length < 2 || data.load.labels[0].indexOf("–") < 0
        ? "One line per rank." : "Ranks grouped in bands: the line is a band's mean, the shade its min–max.";
      bandsChart("chart-load", data.load, data.x_label);
    } else hide("sec-load");
    if (data.heat) { document.getElementById("what-heat").textContent = data.heat.title + "."; heatChart("chart-heat", data.heat); } else hide("sec-heat");
    if (data.utilisation) { document.getElementById("what-utilisation").textContent = data.utilisation.title + ": 1 is busy all the time."; heatChart("chart-utilisation", data.utilisation); } else hide("sec-utilisation");
    if (data.migrations) {
      document.getElementById("what-migrations").textContent = data.migrations.transfers + " transfers, " + fmt(data.migrations.bytes) + " bytes; units moved, as a matrix and as arcs.";
      matrixChart("chart-matrix", data.migrations);
      arrowsChart("chart-arrows", data.migrations);
    } else hide("sec-migrations");
    if (data.decisions.length) decisionsChart("chart-decisions", data.decisions, data.x_label); else hide("sec-decisions");
    if (data.iteration_seconds.length) lineChart("chart-iterations", data.iteration_seconds, "iteration", "seconds"); else hide("sec-iterations");
    if (data.scenario) barsChart("chart-scenario", data.scenario); else hide("sec-scenario");
  }
  draw();
  let pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      document.querySelectorAll(".legend").forEach(function (l) { l.remove(); });
      draw();
    }, 150);
  });
})();
