// Sorting, filtering, paging and drill-down for the occubench report's tables.
// Inlined in the page and allowed by the Content-Security-Policy through its SHA-256
// hash. It moves and hides existing rows only: it never writes HTML, so the text of
// the page (model text included) stays text.
(function () {
  "use strict";

  function cellValue(cell) {
    return cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
  }

  function sortKey(cell) {
    var raw = cell.getAttribute("data-sort");
    if (raw === null) {
      return [cellValue(cell).toLowerCase()];
    }
    var value = JSON.parse(raw);
    return Array.isArray(value) ? value : [value];
  }

  function missing(x) {
    return x === null || x === undefined || x === "";
  }

  // Compare keys element by element; undefined values go last whatever the direction.
  function compare(a, b, direction) {
    for (var i = 0; i < Math.max(a.length, b.length); i++) {
      var x = a[i], y = b[i];
      if (missing(x) && missing(y)) { continue; }
      if (missing(x)) { return 1; }
      if (missing(y)) { return -1; }
      if (x === y) { continue; }
      var order = (typeof x === "number" && typeof y === "number")
        ? x - y
        : String(x).localeCompare(String(y), undefined, {numeric: true});
      if (order !== 0) { return direction * order; }
    }
    return 0;
  }

  function Explorer(table) {
    var self = this;
    this.table = table;
    this.body = table.tBodies[0];
    this.rows = Array.prototype.slice.call(this.body.rows);
    this.rows.forEach(function (row, i) { row.setAttribute("data-index", String(i)); });
    var head = table.tHead.rows[table.tHead.rows.length - 1];
    this.headers = Array.prototype.slice.call(head.cells);
    this.pageSize = parseInt(table.getAttribute("data-page-size") || "0", 10);
    this.page = 0;
    this.sorted = null;
    this.direction = 1;
    this.selects = {};

    var bar = document.createElement("div");
    bar.className = "controls";
    this.headers.forEach(function (th, column) {
      if (!th.hasAttribute("data-nosort")) {
        th.classList.add("sortable");
        th.tabIndex = 0;
        th.setAttribute("aria-sort", "none");
        th.title = "Sort by " + th.textContent.trim();
        th.addEventListener("click", function () { self.sortBy(column); });
        th.addEventListener("keydown", function (event) {
          if (event.key === "Enter" || event.key === " ") { event.preventDefault(); self.sortBy(column); }
        });
      }
      if (th.hasAttribute("data-filter")) {
        var label = document.createElement("label");
        label.textContent = th.getAttribute("data-filter") + " ";
        var select = document.createElement("select");
        select.setAttribute("data-key", th.getAttribute("data-key") || "");
        select.appendChild(new Option("(any)", ""));
        var values = {};
        self.rows.forEach(function (row) { values[cellValue(row.cells[column])] = true; });
        Object.keys(values).sort(function (a, b) {
          return a.localeCompare(b, undefined, {numeric: true});
        }).forEach(function (value) { select.appendChild(new Option(value, value)); });
        var preset = th.getAttribute("data-default");
        if (preset !== null && values[preset]) { select.value = preset; }
        select.addEventListener("change", function () { self.page = 0; self.apply(); });
        label.appendChild(select);
        bar.appendChild(label);
        self.selects[column] = select;
      }
    });
    this.search = document.createElement("input");
    this.search.type = "search";
    this.search.placeholder = "filter rows";
    this.search.setAttribute("aria-label", "Filter rows by any text");
    this.search.addEventListener("input", function () { self.page = 0; self.apply(); });
    bar.appendChild(this.search);
    this.count = document.createElement("span");
    this.count.className = "count";
    bar.appendChild(this.count);
    if (this.pageSize > 0) {
      this.previous = document.createElement("button");
      this.previous.type = "button";
      this.previous.textContent = "previous";
      this.previous.addEventListener("click", function () { self.page -= 1; self.apply(); });
      this.next = document.createElement("button");
      this.next.type = "button";
      this.next.textContent = "next";
      this.next.addEventListener("click", function () { self.page += 1; self.apply(); });
      this.pageLabel = document.createElement("span");
      this.pageLabel.className = "page";
      bar.appendChild(this.previous);
      bar.appendChild(this.pageLabel);
      bar.appendChild(this.next);
    }
    var anchor = table.closest(".scroll") || table;
    anchor.parentNode.insertBefore(bar, anchor);
    this.apply();
  }

  Explorer.prototype.sortBy = function (column) {
    this.direction = this.sorted === column ? -this.direction : (this.headers[column].hasAttribute("data-descending") ? -1 : 1);
    this.sorted = column;
    var self = this;
    this.headers.forEach(function (th, i) {
      if (th.classList.contains("sortable")) {
        th.setAttribute("aria-sort", i !== column ? "none" : (self.direction > 0 ? "ascending" : "descending"));
      }
    });
    this.page = 0;
    this.apply();
  };

  Explorer.prototype.matching = function () {
    var self = this;
    var query = this.search.value.trim().toLowerCase();
    return this.rows.filter(function (row) {
      for (var column in self.selects) {
        var wanted = self.selects[column].value;
        if (wanted !== "" && cellValue(row.cells[column]) !== wanted) { return false; }
      }
      return query === "" || row.textContent.toLowerCase().indexOf(query) >= 0;
    });
  };

  Explorer.prototype.apply = function () {
    var self = this;
    var order = this.rows.slice();
    if (this.sorted !== null) {
      order.sort(function (a, b) {
        return compare(sortKey(a.cells[self.sorted]), sortKey(b.cells[self.sorted]), self.direction)
          || Number(a.getAttribute("data-index")) - Number(b.getAttribute("data-index"));
      });
    }
    order.forEach(function (row) { self.body.appendChild(row); });
    var shown = this.matching();
    var visible = {};
    var pages = 1;
    if (this.pageSize > 0) {
      pages = Math.max(1, Math.ceil(shown.length / this.pageSize));
      this.page = Math.min(Math.max(this.page, 0), pages - 1);
    }
    var matched = new Set(shown);
    var inOrder = order.filter(function (row) { return matched.has(row); });
    inOrder.forEach(function (row, i) {
      if (self.pageSize <= 0 || Math.floor(i / self.pageSize) === self.page) { visible[row.getAttribute("data-index")] = true; }
    });
    this.rows.forEach(function (row) { row.hidden = !visible[row.getAttribute("data-index")]; });
    this.count.textContent = shown.length + " of " + this.rows.length + " rows";
    if (this.pageSize > 0) {
      this.pageLabel.textContent = "page " + (this.page + 1) + " of " + pages;
      this.previous.disabled = this.page === 0;
      this.next.disabled = this.page >= pages - 1;
    }
    this.shown = inOrder;
  };

  // Show the samples behind a cell: set the samples table's filters to the cell's
  // setup, mode, industry, ... and go there (straight to the trajectory if only one).
  Explorer.prototype.drill = function (spec) {
    var self = this;
    this.search.value = "";
    Object.keys(this.selects).forEach(function (column) {
      var select = self.selects[column];
      var key = select.getAttribute("data-key");
      var value = Object.prototype.hasOwnProperty.call(spec, key) ? String(spec[key]) : "";
      if (value !== "" && !Array.prototype.some.call(select.options, function (o) { return o.value === value; })) {
        select.appendChild(new Option(value, value));
      }
      select.value = value;
    });
    this.page = 0;
    this.apply();
    var link = this.shown.length === 1 ? this.shown[0].querySelector("a[href^='#sample-']") : null;
    if (link) {
      window.location.hash = link.getAttribute("href");
    } else {
      this.table.scrollIntoView();
    }
  };

  var explorers = Array.prototype.map.call(document.querySelectorAll("table.explore"), function (table) {
    return new Explorer(table);
  });
  var samples = null;
  explorers.forEach(function (e) { if (e.table.id === "samples-table") { samples = e; } });
  document.addEventListener("click", function (event) {
    var target = event.target.closest("[data-drill]");
    if (!target || !samples) { return; }
    event.preventDefault();
    samples.drill(JSON.parse(target.getAttribute("data-drill")));
  });
})();
