// Bobbin's web UI: tables with class "sortable" sort by a column when its header is
// clicked (cells may carry data-sort for the value to sort by); tables with class "paged"
// get a search box and pages of data-page-size rows; a "kill" button kills its
// data-app through the REST API (PUT .../state, under the same ACL as any REST caller).
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
    table.dispatchEvent(new Event("sorted"));
  }
  function button(text) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    return b;
  }
  function paged(table) {
    var body = table.tBodies[0];
    if (!body) { return; }
    var size = Number(table.getAttribute("data-page-size")) || 50;
    var page = 0, filter = "";
    var bar = document.createElement("div");
    bar.className = "table-tools";
    var search = document.createElement("input");
    search.type = "search";
    search.placeholder = "Search";
    search.setAttribute("aria-label", "Search the table");
    var prev = button("\u2039 Previous"), next = button("Next \u203a");
    var info = document.createElement("span");
    info.className = "muted page-info";
    bar.appendChild(search);
    bar.appendChild(prev);
    bar.appendChild(info);
    bar.appendChild(next);
    table.parentNode.insertBefore(bar, table);
    function show() {
      var rows = Array.prototype.slice.call(body.rows);
      var match = rows.filter(function (r) { return filter === "" || r.textContent.toLowerCase().indexOf(filter) >= 0; });
      var pages = Math.max(1, Math.ceil(match.length / size));
      page = Math.min(page, pages - 1);
      rows.forEach(function (r) { r.hidden = true; });
      match.slice(page * size, (page + 1) * size).forEach(function (r) { r.hidden = false; });
      info.textContent = match.length === 0 ? "no match" :
        (page * size + 1) + "\u2013" + Math.min(match.length, (page + 1) * size) + " of " + match.length + (filter ? " matching" : "");
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    }
    search.addEventListener("input", function () { filter = search.value.trim().toLowerCase(); page = 0; show(); });
    prev.addEventListener("click", function () { page--; show(); });
    next.addEventListener("click", function () { page++; show(); });
    table.addEventListener("sorted", show);
    show();
  }
  function remoteMessage(text) {
    try {
      var e = JSON.parse(text).RemoteException;
      if (e && e.message) { return e.message; }
    } catch (ignored) { /* not JSON: the text itself */ }
    return text;
  }
  function killButton(b) {
    b.addEventListener("click", function () {
      var app = b.getAttribute("data-app");
      var out = b.parentNode.querySelector(".kill-result");
      if (!window.confirm("Kill " + app + "?")) { return; }
      var url = "/ws/v1/cluster/apps/" + encodeURIComponent(app) + "/state";
      var user = new URLSearchParams(window.location.search).get("user.name");
      if (user) { url += "?user.name=" + encodeURIComponent(user); }
      b.disabled = true;
      fetch(url, {method: "PUT", credentials: "same-origin", headers: {"Content-Type": "application/json", "Accept": "application/json"},
        body: JSON.stringify({state: "KILLED"})}).then(function (r) {
        return r.text().then(function (t) {
          if (r.ok) {
            out.textContent = "kill requested";
            window.setTimeout(function () { window.location.reload(); }, 1000);
          } else {
            out.textContent = "refused (" + r.status + "): " + remoteMessage(t);
            b.disabled = false;
          }
        });
      }, function (err) {
        out.textContent = "failed: " + err;
        b.disabled = false;
      });
    });
  }
  function init() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      if (!table.tHead) { return; }
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
        th.classList.add("sortable");
        th.addEventListener("click", function () { sortBy(table, i, th); });
      });
    });
    document.querySelectorAll("table.paged").forEach(paged);
    document.querySelectorAll("button.kill").forEach(killButton);
    document.body.setAttribute("data-ui-ready", "1");
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
