/* Digging Down Ladder: what JavaScript adds to pages that already work without it.
 * - the rating history chart (uPlot, vendored) drawn from the page's JSON data;
 * - click-to-sort on tables marked data-sortable (the rows are all on the page);
 * - filter selects that apply themselves on change;
 * - parts of a page marked data-live (with an id) that update themselves: the page
 *   polls /live/pulse.json while the tab is visible (never while hidden) and, when
 *   the ladder changed, fetches itself again and swaps those parts in (ladder/web/live.py).
 */
(function () {
  "use strict";

  function cssVar(name, fallback) {
    var v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return v || fallback;
  }

  function drawRatingChart(box) {
    var source = document.getElementById(box.dataset.source);
    if (!source || typeof window.uPlot !== "function") return;
    var data = JSON.parse(source.textContent);
    var matches = data.match, ratings = data.rating;
    var xs = matches.map(function (_, i) { return i + 1; });
    var width = function () { return Math.max(240, box.clientWidth); };
    var opts = {
      width: width(),
      height: 260,
      scales: {
        x: { time: false, range: function (u, min, max) {
          return min === max ? [min - 1, max + 1] : [min, max];
        } },
        y: { range: function (u, min, max) {
          var pad = Math.max(10, (max - min) * 0.1);
          return [Math.floor(min - pad), Math.ceil(max + pad)];
        } }
      },
      axes: [
        { label: "recorded matches, oldest first", stroke: cssVar("--muted", "#666"),
          grid: { stroke: cssVar("--line", "#ddd") },
          incrs: [1, 2, 5, 10, 20, 50, 100, 200] },
        { label: "rating", stroke: cssVar("--muted", "#666"), size: 60,
          grid: { stroke: cssVar("--line", "#ddd") } }
      ],
      series: [
        { label: "match", value: function (u, v) { return v == null ? "–" : "#" + matches[v - 1]; } },
        { label: "rating", stroke: cssVar("--diamond", "#117e86"), width: 2,
          points: { show: xs.length <= 60 },
          value: function (u, v) { return v == null ? "–" : v.toFixed(2); } }
      ]
    };
    var series = [xs, ratings];
    // The 95 % band (rating ± 1.96 sigma), filled between its two edges.
    if (data.low && data.high) {
      var fmt = function (u, v) { return v == null ? "–" : v.toFixed(2); };
      opts.series.push({ label: "95 % low", stroke: cssVar("--line", "#bbb"), width: 1, value: fmt });
      opts.series.push({ label: "95 % high", stroke: cssVar("--line", "#bbb"), width: 1, value: fmt });
      opts.bands = [{ series: [3, 2], fill: "rgba(17, 126, 134, 0.12)" }];
      series.push(data.low, data.high);
      box.dataset.band = "1";
    }
    var plot = new window.uPlot(opts, series, box);
    box.dataset.points = String(plot.data[0].length);
    window.addEventListener("resize", function () {
      plot.setSize({ width: width(), height: 260 });
    });
  }

  function cellKey(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    return cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
  }

  function makeSortable(table) {
    var body = table.tBodies[0];
    if (!body || !table.tHead) return;
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        var rows = Array.prototype.filter.call(body.rows, function (r) {
          return !r.querySelector("td.empty");
        });
        rows.sort(function (a, b) {
          var x = cellKey(a, index), y = cellKey(b, index);
          var nx = parseFloat(x.replace("−", "-")), ny = parseFloat(y.replace("−", "-"));
          var order = !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y);
          return ascending ? order : -order;
        });
        rows.forEach(function (r) { body.appendChild(r); });
        Array.prototype.forEach.call(heads, function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      });
    });
  }

  function autoSubmit(form) {
    Array.prototype.forEach.call(form.querySelectorAll("select"), function (select) {
      select.addEventListener("change", function () {
        var page = form.querySelector("input[name=page]");
        if (page) page.remove();
        if (form.requestSubmit) form.requestSubmit(); else form.submit();
      });
    });
  }

  function liveRegions() {
    var regions = document.querySelectorAll("[data-live][id]");
    var meta = document.querySelector("meta[name=ladder-pulse]");
    if (!regions.length || !meta || !window.fetch) return;
    var last = null, busy = false, poll = 5000, timer = null;
    function swap(html) {
      var fresh = new DOMParser().parseFromString(html, "text/html");
      regions.forEach(function (el) {
        var part = fresh.getElementById(el.id);
        if (part && part.innerHTML !== el.innerHTML) {
          el.innerHTML = part.innerHTML;
          el.querySelectorAll("table[data-sortable]").forEach(makeSortable);
        }
      });
      document.documentElement.dataset.liveRefreshed = String(Date.now());
    }
    function refresh() {
      busy = true;
      fetch(window.location.href, { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) { if (html) swap(html); })
        .catch(function () {})
        .then(function () { busy = false; });
    }
    function tick() {
      if (document.hidden || busy) return;
      fetch(meta.content, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (p) {
          if (!p) return;
          if (p.poll_ms && p.poll_ms !== poll) { poll = p.poll_ms; schedule(); }
          if (last !== null && p.pulse !== last) refresh();
          last = p.pulse;
        })
        .catch(function () {});
    }
    function schedule() {
      if (timer) clearInterval(timer);
      timer = setInterval(tick, poll);
    }
    document.addEventListener("visibilitychange", function () { if (!document.hidden) tick(); });
    schedule();
    tick();
  }

  document.querySelectorAll("[data-chart=rating]").forEach(drawRatingChart);
  document.querySelectorAll("table[data-sortable]").forEach(makeSortable);
  document.querySelectorAll("form[data-autosubmit]").forEach(autoSubmit);
  liveRegions();
})();
