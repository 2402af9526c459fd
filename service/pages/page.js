// xladb pages: table sorting, the chart's hover card and buffer lifetimes. Inlined into every page (no
// network); works from file:// and from xladbd --http alike. Reads only the page's own DOM and its
// <script type="application/json" class="chart-data"> blocks.
(function () {
  "use strict";

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    if (v !== null && v !== "" && !isNaN(Number(v))) return Number(v);
    return (v !== null ? v : cell.textContent).toLowerCase();
  }

  // Sortable tables: a click on a header with data-sort orders the rows by that column, again to reverse.
  function makeSortable(table) {
    var heads = table.querySelectorAll("thead th[data-sort]");
    heads.forEach(function (th) {
      th.addEventListener("click", function () {
        var index = th.cellIndex;
        var descending = th.getAttribute("aria-sort") !== "descending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, index), y = cellValue(b, index);
          var c = x < y ? -1 : x > y ? 1 : 0;
          return descending ? -c : c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  var SVG = "http://www.w3.org/2000/svg";

  function chartGeometry(svg) {
    return {
      left: Number(svg.getAttribute("data-plot-left")),
      top: Number(svg.getAttribute("data-plot-top")),
      width: Number(svg.getAttribute("data-plot-width")),
      height: Number(svg.getAttribute("data-plot-height")),
      lastTime: Math.max(1, Number(svg.getAttribute("data-last-time"))),
    };
  }

  function humanBytes(n) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"];
    var u = 0, x = n;
    while (Math.abs(x) >= 1024 && u < units.length - 1) { x /= 1024; u++; }
    return u === 0 ? n + " B" : x.toFixed(1) + " " + units[u];
  }

  // The hover card: the schedule time under the pointer, its instruction and each series' bytes.
  function attachHover(svg) {
    var dataNode = document.getElementById(svg.id + "-data");
    if (!dataNode) return;
    var data = JSON.parse(dataNode.textContent);
    var card = document.getElementById(svg.id + "-card");
    var cursor = svg.querySelector(".cursor");
    var g = chartGeometry(svg);
    svg.addEventListener("mousemove", function (event) {
      var box = svg.getBoundingClientRect();
      var scale = svg.viewBox.baseVal.width / box.width;
      var x = (event.clientX - box.left) * scale;
      var t = Math.floor((x - g.left) / g.width * g.lastTime);
      if (t < 0 || t >= g.lastTime || data.t.length === 0) { card.hidden = true; return; }
      var lo = 0, hi = data.t.length - 1;
      while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (data.t[mid] <= t) lo = mid; else hi = mid - 1; }
      var lines = [(data.x || "time") + " " + data.t[lo] + (data.w > 1 ? "–" + (data.t[lo] + data.w - 1) : "") +
                   (data.i[lo] ? "  " + data.i[lo] : "")];
      data.series.forEach(function (s) {
        if (s.v[lo] !== null) lines.push(s.label + ": " + humanBytes(s.v[lo]));
      });
      card.textContent = lines.join("\n");
      card.hidden = false;
      var cx = g.left + data.t[lo] / g.lastTime * g.width;
      cursor.setAttribute("x1", cx);
      cursor.setAttribute("x2", cx);
      cursor.setAttribute("visibility", "visible");
    });
    svg.addEventListener("mouseleave", function () {
      card.hidden = true;
      cursor.setAttribute("visibility", "hidden");
    });
  }

  // A row with data-start/data-end draws its buffer's lifetime on the chart named by data-chart.
  function attachLifetimes(row) {
    var svg = document.getElementById(row.getAttribute("data-chart"));
    if (!svg) return;
    var g = chartGeometry(svg);
    var start = Number(row.getAttribute("data-start")), end = Number(row.getAttribute("data-end"));
    row.addEventListener("mouseenter", function () {
      var rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("class", "lifetime");
      rect.setAttribute("x", g.left + start / g.lastTime * g.width);
      rect.setAttribute("width", Math.max(1, (end + 1 - start) / g.lastTime * g.width));
      rect.setAttribute("y", g.top);
      rect.setAttribute("height", g.height);
      svg.appendChild(rect);
      row.classList.add("hovered");
    });
    row.addEventListener("mouseleave", function () {
      svg.querySelectorAll("rect.lifetime").forEach(function (r) { r.remove(); });
      row.classList.remove("hovered");
    });
  }

  // A byte count's exact value, on hover (kept out of the page's bytes until asked for).
  document.addEventListener("mouseover", function (event) {
    var cell = event.target.closest ? event.target.closest("td.b") : null;
    if (cell && !cell.title && cell.getAttribute("data-v") !== "-1") {
      cell.title = Number(cell.getAttribute("data-v")).toLocaleString("en-US") + " bytes";
    }
  });

  document.querySelectorAll("table.sortable").forEach(makeSortable);
  document.querySelectorAll("svg.memchart").forEach(attachHover);
  document.querySelectorAll("tr[data-chart]").forEach(attachLifetimes);
  document.documentElement.setAttribute("data-ready", "1");
})();
