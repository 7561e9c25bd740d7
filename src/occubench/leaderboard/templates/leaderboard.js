// The occubench leaderboard's one script: filters, selection, the industry radar of the
// selection and the cost-vs-CR Pareto chart, drawn from the data embedded in the page.
// Inlined and allowed by the Content-Security-Policy through its SHA-256 hash. It hides
// rows and draws SVG elements; every text it shows is set as text (textContent), never
// parsed as HTML, so a model's name stays a name.
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var PALETTE = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860",
    "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"];
  var data = JSON.parse(document.getElementById("site-data").textContent);

  // Every row of the page, measured or published, by its id.
  var entries = {};
  data.boards.forEach(function (board) {
    board.entries.forEach(function (e) {
      entries[e.id] = {id: e.id, name: e.agent, kind: board.bundle_class, board: board.id,
        mode: board.mode,
        rate: e.rate, cost: e.cost_per_task, tokens: e.tokens_per_task,
        industries: e.industries};
    });
  });
  if (data.published) {
    data.published.rows.forEach(function (p) {
      entries[p.id] = {id: p.id, name: p.model, kind: "published", mode: "E0",
        rate: p.modes.E0, cost: null, tokens: null, industries: p.industries};
    });
  }

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("tr[data-entry]"));
  }

  function node(name, attributes, text) {
    var el = document.createElementNS(SVG, name);
    Object.keys(attributes || {}).forEach(function (key) { el.setAttribute(key, attributes[key]); });
    if (text !== undefined) { el.textContent = text; }
    return el;
  }

  function clear(el) {
    while (el.firstChild) { el.removeChild(el.firstChild); }
  }

  // ---- filters -------------------------------------------------------------------
  function visible(row) {
    return row.style.display !== "none";
  }

  function applyFilters() {
    var text = document.getElementById("filter").value.trim().toLowerCase();
    var show = {
      standard: document.getElementById("show-standard").checked,
      custom: document.getElementById("show-custom").checked,
      published: true
    };
    var shown = 0;
    rows().forEach(function (row) {
      var name = (row.getAttribute("data-agent") || "").toLowerCase();
      var ok = show[row.getAttribute("data-class")] && (!text || name.indexOf(text) >= 0);
      row.style.display = ok ? "" : "none";
      if (ok) { shown += 1; }
    });
    Array.prototype.forEach.call(document.querySelectorAll("section.board"), function (section) {
      var any = section.querySelectorAll("tr[data-entry]:not([style*='none'])").length > 0;
      section.style.display = any ? "" : "none";
    });
    document.getElementById("shown").textContent = shown + " row(s) shown";
    drawPareto();
  }

  // ---- the industry radar of the selection ---------------------------------------
  function selected() {
    return Array.prototype.slice.call(document.querySelectorAll("input.pick:checked"))
      .map(function (box) { return entries[box.getAttribute("data-entry")]; })
      .filter(function (e) { return e; });
  }

  function drawRadar() {
    var svg = document.getElementById("radar");
    var legend = document.getElementById("radar-legend");
    clear(svg);
    clear(legend);
    var chosen = selected();
    var axes = [];
    chosen.forEach(function (e) {
      Object.keys(e.industries).forEach(function (name) {
        if (axes.indexOf(name) < 0) { axes.push(name); }
      });
    });
    axes.sort();
    var width = 520, height = 420, cx = width / 2, cy = height / 2 + 5, radius = 140;
    if (chosen.length === 0 || axes.length < 3) {
      svg.appendChild(node("text", {x: 20, y: 30, "class": "radar-empty"},
        chosen.length === 0 ? "Select rows to draw their industry profile."
          : "An industry profile needs rows with three industries or more."));
      return;
    }
    function point(i, value) {
      var angle = -Math.PI / 2 + 2 * Math.PI * i / axes.length;
      return [cx + radius * value * Math.cos(angle), cy + radius * value * Math.sin(angle)];
    }
    [0.25, 0.5, 0.75, 1].forEach(function (level) {
      var ring = axes.map(function (_, i) { return point(i, level).join(","); }).join(" ");
      svg.appendChild(node("polygon", {points: ring, fill: "none", stroke: "#ddd"}));
    });
    axes.forEach(function (name, i) {
      var end = point(i, 1), label = point(i, 1.12);
      svg.appendChild(node("line", {x1: cx, y1: cy, x2: end[0], y2: end[1], stroke: "#ddd"}));
      var anchor = Math.abs(label[0] - cx) < 5 ? "middle" : (label[0] > cx ? "start" : "end");
      svg.appendChild(node("text", {x: label[0], y: label[1], "font-size": 10,
        "text-anchor": anchor, "class": "axis"}, name));
    });
    chosen.forEach(function (e, k) {
      var colour = PALETTE[k % PALETTE.length];
      var points = axes.map(function (name, i) {
        var value = e.industries[name];
        return point(i, value === null || value === undefined ? 0 : value).join(",");
      }).join(" ");
      var shape = node("polygon", {points: points, fill: colour, "fill-opacity": 0.12,
        stroke: colour, "stroke-width": 2, "class": "profile", "data-entry": e.id});
      shape.appendChild(node("title", {}, e.name));
      svg.appendChild(shape);
      var item = document.createElement("span");
      var swatch = document.createElement("i");
      swatch.style.background = colour;
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(e.name + (e.kind === "published" ? " (published)" : "")));
      legend.appendChild(item);
    });
  }

  // ---- cost against CR: the Pareto chart -----------------------------------------
  function drawPareto() {
    var svg = document.getElementById("pareto");
    clear(svg);
    var chooser = document.getElementById("pareto-board");
    var board = chooser ? chooser.value : "";
    var shown = rows().filter(visible).map(function (row) {
      return entries[row.getAttribute("data-entry")];
    }).filter(function (e) { return e && e.board === board && e.rate !== null; });
    var dollars = shown.length > 0 && shown.every(function (e) { return e.cost !== null; });
    var points = shown.map(function (e) {
      return {e: e, x: dollars ? e.cost : e.tokens, y: e.rate};
    }).filter(function (p) { return p.x !== null && p.x !== undefined; });
    var unit = dollars ? "$ per task" : "tokens per task";
    svg.setAttribute("data-unit", dollars ? "usd" : "tokens");
    var width = 560, height = 420, left = 60, right = 20, top = 34, bottom = 50;
    var most = Math.max.apply(null, points.map(function (p) { return p.x; }).concat([0]));
    var span = most > 0 ? most * 1.08 : 1;
    function sx(x) { return left + (width - left - right) * x / span; }
    function sy(y) { return top + (height - top - bottom) * (1 - y); }
    svg.appendChild(node("line", {x1: left, y1: sy(0), x2: width - right, y2: sy(0), stroke: "#999"}));
    svg.appendChild(node("line", {x1: left, y1: top, x2: left, y2: sy(0), stroke: "#999"}));
    [0, 0.25, 0.5, 0.75, 1].forEach(function (y) {
      svg.appendChild(node("text", {x: left - 6, y: sy(y) + 4, "text-anchor": "end", "font-size": 10},
        String(Math.round(100 * y))));
    });
    [0, 0.5, 1].forEach(function (f) {
      var value = span * f / 1.08;
      svg.appendChild(node("text", {x: sx(value), y: sy(0) + 16, "text-anchor": "middle", "font-size": 10},
        dollars ? "$" + value.toFixed(4) : Math.round(value).toLocaleString("en")));
    });
    svg.appendChild(node("text", {x: (left + width - right) / 2, y: height - 8, "text-anchor": "middle",
      "font-size": 11}, unit));
    svg.appendChild(node("text", {x: 14, y: (top + sy(0)) / 2, "font-size": 11,
      transform: "rotate(-90 14 " + (top + sy(0)) / 2 + ")", "text-anchor": "middle"}, "CR %"));
    if (points.length === 0) {
      svg.appendChild(node("text", {x: left + 10, y: top + 20, "class": "pareto-empty"},
        "No row of this board is shown."));
      return;
    }
    // The frontier: rows no other row beats on both cost (lower) and CR (higher).
    points.sort(function (a, b) { return a.x - b.x || b.y - a.y; });
    var frontier = [], best = -1;
    points.forEach(function (p) {
      if (p.y > best) { frontier.push(p); best = p.y; }
    });
    svg.appendChild(node("polyline", {"class": "frontier", fill: "none", stroke: "#c44e52",
      "stroke-width": 1.5, points: frontier.map(function (p) { return sx(p.x) + "," + sy(p.y); }).join(" ")}));
    var placed = [];
    function labelY(x, y, width) {
      // Move a label down past the labels already placed where it would overlap one.
      var moved = true;
      while (moved) {
        moved = false;
        placed.forEach(function (box) {
          if (Math.abs(box.y - y) < 11 && x < box.x + box.w && box.x < x + width) {
            y = box.y + 11;
            moved = true;
          }
        });
      }
      placed.push({x: x, y: y, w: width});
      return y;
    }
    points.forEach(function (p) {
      var onFrontier = frontier.indexOf(p) >= 0;
      var dot = node("circle", {cx: sx(p.x), cy: sy(p.y), r: onFrontier ? 5 : 4,
        fill: onFrontier ? "#c44e52" : "#4c72b0", "class": "point" + (onFrontier ? " optimal" : ""),
        "data-entry": p.e.id, "data-x": p.x, "data-y": p.y});
      dot.appendChild(node("title", {}, p.e.name + ": CR " + (100 * p.y).toFixed(1) + "%, " +
        (dollars ? "$" + p.x.toFixed(4) : Math.round(p.x) + " tokens") + " per task"));
      svg.appendChild(dot);
      var leftward = sx(p.x) > width / 2;
      var wide = 5.6 * p.e.name.length;
      var x = sx(p.x) + (leftward ? -7 : 7);
      svg.appendChild(node("text", {x: x, y: labelY(leftward ? x - wide : x, sy(p.y) - 7, wide),
        "font-size": 10, "class": "label", "text-anchor": leftward ? "end" : "start"}, p.e.name));
    });
  }

  document.getElementById("filter").addEventListener("input", applyFilters);
  document.getElementById("pareto-board").addEventListener("change", drawPareto);
  document.getElementById("show-standard").addEventListener("change", applyFilters);
  document.getElementById("show-custom").addEventListener("change", applyFilters);
  Array.prototype.forEach.call(document.querySelectorAll("input.pick"), function (box) {
    box.addEventListener("change", drawRadar);
  });
  applyFilters();
  drawRadar();
})();
