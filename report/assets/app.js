// r2med report and viewer: sortable tables, chart tooltips and legend
// highlighting. No network, no libraries; sets data-ready="1" on <body>
// when done, which the headless-browser tests look for.
(function () {
  "use strict";

  function cellValue(td, numeric) {
    if (!td) return numeric ? NaN : "";
    var v = td.getAttribute("data-v");
    if (v === null) v = td.textContent.trim();
    return numeric ? (v === "" ? NaN : parseFloat(v)) : v.toLowerCase();
  }

  // order lays out tbody rows: our runs first while the table's pin is
  // on, then by the sorted column (missing numbers last whatever the
  // direction, as in the terminal table), else in ranking order.
  function order(table) {
    var st = table._sort, pin = table.getAttribute("data-pin") === "1";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var numeric = false;
    if (st) numeric = table.tHead.rows[0].cells[st.col].getAttribute("data-type") === "num";
    rows.forEach(function (r, i) { r._i = r.hasAttribute("data-order") ? parseInt(r.getAttribute("data-order"), 10) : (r._i0 === undefined ? (r._i0 = i) : r._i0); });
    rows.sort(function (a, b) {
      if (pin) {
        var oa = a.classList.contains("ours") ? 0 : 1, ob = b.classList.contains("ours") ? 0 : 1;
        if (oa !== ob) return oa - ob;
      }
      if (st) {
        var x = cellValue(a.cells[st.col], numeric), y = cellValue(b.cells[st.col], numeric);
        if (numeric) {
          var xn = isNaN(x), yn = isNaN(y);
          if (xn || yn) { if (xn !== yn) return xn ? 1 : -1; }
          else if (x !== y) return st.dir === "ascending" ? x - y : y - x;
        } else if (x !== y) return (x < y ? -1 : 1) * (st.dir === "ascending" ? 1 : -1);
      }
      return a._i - b._i;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function sortTable(table, col, dir) {
    table._sort = { col: col, dir: dir };
    order(table);
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
    table.tHead.rows[0].cells[col].setAttribute("aria-sort", dir);
  }

  function initTables() {
    var n = 0;
    document.querySelectorAll("table.sortable").forEach(function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
        var label = th.textContent;
        var btn = document.createElement("button");
        btn.type = "button";
        btn.textContent = label;
        btn.title = th.title ? th.title + " — sort" : "Sort by " + label;
        th.textContent = "";
        th.appendChild(btn);
        btn.addEventListener("click", function () {
          var cur = th.getAttribute("aria-sort");
          var numeric = th.getAttribute("data-type") === "num";
          var dir = cur ? (cur === "ascending" ? "descending" : "ascending") : (numeric ? "descending" : "ascending");
          sortTable(table, col, dir);
        });
      });
      n += table.tBodies[0].rows.length;
    });
    document.querySelectorAll("input.pin").forEach(function (box) {
      box.addEventListener("change", function () {
        var table = document.getElementById(box.getAttribute("data-table"));
        if (!table) return;
        table.setAttribute("data-pin", box.checked ? "1" : "");
        order(table);
      });
    });
    // #sort=KEY:asc|desc sorts the first sortable table on load, so a
    // sorted view can be linked (and tested without a pointer); #unpin
    // turns the pin off.
    var hash = decodeURIComponent(location.hash || "");
    var first = document.querySelector("table.sortable");
    if (first && /unpin/.test(hash)) {
      first.setAttribute("data-pin", "");
      var box = document.querySelector('input.pin[data-table="' + first.id + '"]');
      if (box) box.checked = false;
      order(first);
    }
    var m = /sort=([^:&]+):(asc|desc)/.exec(hash);
    if (m && first) {
      Array.prototype.forEach.call(first.tHead.rows[0].cells, function (th, col) {
        if (th.getAttribute("data-key") === m[1]) sortTable(first, col, m[2] === "asc" ? "ascending" : "descending");
      });
    }
    return n;
  }

  function initTips() {
    var tip = document.createElement("div");
    tip.id = "tip";
    tip.setAttribute("role", "tooltip");
    document.body.appendChild(tip);
    var marks = document.querySelectorAll("[data-tip]");
    marks.forEach(function (el) {
      // The <title> child is the no-script tooltip; with script ours
      // replaces it so the two do not show at once.
      var t = el.querySelector("title");
      if (t) el.removeChild(t);
    });
    function show(el, x, y) {
      tip.textContent = el.getAttribute("data-tip");
      tip.style.display = "block";
      var w = tip.offsetWidth, h = tip.offsetHeight;
      tip.style.left = Math.min(x + 14, window.innerWidth - w - 8) + "px";
      tip.style.top = Math.max(y - h - 10, 8) + "px";
    }
    document.addEventListener("mousemove", function (e) {
      var el = e.target.closest ? e.target.closest("[data-tip]") : null;
      if (el) show(el, e.clientX, e.clientY); else tip.style.display = "none";
    });
    document.addEventListener("focusin", function (e) {
      var el = e.target.closest ? e.target.closest("[data-tip]") : null;
      if (el) { var r = el.getBoundingClientRect(); show(el, r.right, r.top); }
    });
    document.addEventListener("focusout", function () { tip.style.display = "none"; });
    return marks.length;
  }

  // Hovering or focusing a legend key brings its series forward: in its
  // chart, or in every chart of its group when the legend is shared.
  function initLegends() {
    var n = 0;
    document.querySelectorAll("svg.chart").forEach(function (svg) {
      var group = svg.classList.contains("legend-only") && svg.closest(".chart-group");
      var charts = group ? Array.prototype.slice.call(group.querySelectorAll("svg.chart")) : [svg];
      svg.querySelectorAll(".key").forEach(function (key) {
        n++;
        var s = key.getAttribute("data-series");
        function on() {
          charts.forEach(function (c) {
            c.classList.add("focus");
            c.querySelectorAll(".series").forEach(function (g) {
              g.classList.toggle("on", g.getAttribute("data-series") === s);
            });
          });
        }
        function off() { charts.forEach(function (c) { c.classList.remove("focus"); }); }
        key.addEventListener("mouseenter", on);
        key.addEventListener("focus", on);
        key.addEventListener("mouseleave", off);
        key.addEventListener("blur", off);
      });
    });
    return n;
  }

  function init() {
    var rows = initTables(), tips = initTips(), keys = initLegends();
    document.body.setAttribute("data-rows", String(rows));
    document.body.setAttribute("data-tips", String(tips));
    document.body.setAttribute("data-keys", String(keys));
    document.body.setAttribute("data-ready", "1");
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
