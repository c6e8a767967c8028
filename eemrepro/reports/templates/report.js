(function () {
  "use strict";
  var panel = document.getElementById("cell-details");
  function text(tag, value) { var e = document.createElement(tag); e.textContent = value; return e; }
  function table(headers, rows) {
    var t = document.createElement("table"), head = t.createTHead().insertRow();
    headers.forEach(function (h) { head.appendChild(text("th", h)); });
    var body = t.createTBody();
    rows.forEach(function (r) { var tr = body.insertRow(); r.forEach(function (v) { tr.appendChild(text("td", v)); }); });
    return t;
  }
  function show(section, row) {
    var data = JSON.parse(document.getElementById("details-" + section.id).textContent)[row];
    if (!data) { return; }
    panel.textContent = "";
    var close = text("button", "close"); close.onclick = function () { panel.hidden = true; }; panel.appendChild(close);
    panel.appendChild(text("h3", data.cell));
    panel.appendChild(text("p", data.verdict + (data.reason ? ": " + data.reason : "")));
    if (data.point) { panel.appendChild(text("p", "selected: " + data.point)); }
    if (data.fits) { panel.appendChild(text("p", "fits that did not finish: " + data.fits)); }
    if (data.folds && data.folds.length) {
      panel.appendChild(text("h4", "test folds, each at the point selected for it"));
      panel.appendChild(table(data.fold_headers, data.folds));
    }
    if (data.grid && data.grid.length) {
      panel.appendChild(text("h4", "grid: mean over the test folds per point"));
      panel.appendChild(table(["point", "mean", "folds"], data.grid));
    }
    panel.hidden = false;
    panel.dataset.cell = data.cell;
  }
  document.querySelectorAll("section.table").forEach(function (section) {
    // The paper-shaped table: each cell names its row of the long list (cell-<k>).
    var wide = document.getElementById("T_" + section.id + "_wide");
    if (wide) {
      wide.querySelectorAll("tbody td").forEach(function (td) {
        td.addEventListener("click", function () {
          var m = /\bcell-(\d+)\b/.exec(td.className);
          if (m) { show(section, Number(m[1])); }
        });
      });
    }
    var t = document.getElementById("T_" + section.id) || section.querySelector("table");
    if (!t) { return; }
    t.querySelectorAll("tbody td").forEach(function (td) {
      td.addEventListener("click", function () {
        var m = /\brow(\d+)\b/.exec(td.className);
        if (m) { show(section, Number(m[1])); }
      });
    });
    t.querySelectorAll("thead th").forEach(function (th, col) {
      th.addEventListener("click", function () {
        var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var dir = th.dataset.sorted === "asc" ? -1 : 1;
        th.dataset.sorted = dir === 1 ? "asc" : "desc";
        rows.sort(function (a, b) {
          var x = a.cells[col] ? a.cells[col].textContent : "", y = b.cells[col] ? b.cells[col].textContent : "";
          var nx = parseFloat(x), ny = parseFloat(y);
          if (!isNaN(nx) && !isNaN(ny)) { return dir * (nx - ny); }
          return dir * x.localeCompare(y);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  // The browser test opens the page at #selftest: click the first cell that has folds, as a reader would.
  if (window.location.hash === "#selftest") {
    var section = document.querySelector("section.table");
    var data = section ? JSON.parse(document.getElementById("details-" + section.id).textContent) : [];
    var row = data.findIndex(function (d) { return d.folds && d.folds.length; });
    var wideTable = section ? document.getElementById("T_" + section.id + "_wide") : null;
    var cell = row < 0 ? null : (wideTable ? wideTable.querySelector("tbody td.cell-" + row)
                                           : section.querySelector("tbody td.row" + row));
    if (cell) { cell.click(); }
    document.body.dataset.selftest = cell ? "done" : "no cell with folds";
  }
})();
