// Bobbin's web UI: sortable tables, nothing else. Tables with class "sortable" sort by a
// column when its header is clicked; cells may carry data-sort for the value to sort by.
(function () {
  "use strict";
  function key(cell) {
    var v = cell.getAttribute("data-sort");
    if (v === null) { v = cell.textContent.trim(); }
    var n = Number(v);
    return v !== "" && !isNaN(n) ? n : v.toLowerCase();
  }
  function sortBy(table, col, th) {
    var body = table.tBodies[0];
    if (!body) { return; }
    var asc = !th.classList.contains("sorted-asc");
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) {
      c.classList.remove("sorted-asc", "sorted-desc");
    });
    th.classList.add(asc ? "sorted-asc" : "sorted-desc");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col]), y = key(b.cells[col]);
      if (x < y) { return asc ? -1 : 1; }
      if (x > y) { return asc ? 1 : -1; }
      return 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function init() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      if (!table.tHead) { return; }
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
        th.classList.add("sortable");
        th.addEventListener("click", function () { sortBy(table, i, th); });
      });
    });
    document.body.setAttribute("data-ui-ready", "1");
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
