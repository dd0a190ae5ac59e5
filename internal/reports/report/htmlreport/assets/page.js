// SPDX-License-Identifier: Apache-2.0

// hwpprobe report page: draws the charts described by the JSON in
// #hwp-data with uPlot, keeps the zoom of each group of timelines in step,
// and checks that every chart drew something (window.hwpCheck,
// <html data-rendered>) for the browser test and the benchmark.
"use strict";
(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push(String(e.message || e));
  });

  var data = JSON.parse(document.getElementById("hwp-data").textContent);
  var plots = [];
  var groups = {};
  var syncing = false;

  function css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function fmt(v, unit) {
    if (v == null || !isFinite(v)) return "-";
    var a = Math.abs(v);
    var s = a >= 1000 ? v.toFixed(0) : a >= 100 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
    return unit ? s + " " + unit : s;
  }

  // overlays draws a chart's horizontal lines (PL1, TjMax, medians) and
  // spans (intervals) inside the plot area.
  function overlays(c) {
    return function (u) {
      var ctx = u.ctx;
      var b = u.bbox;
      ctx.save();
      ctx.beginPath();
      ctx.rect(b.left, b.top, b.width, b.height);
      ctx.clip();
      (c.hspans || []).forEach(function (s) {
        var y0 = u.valToPos(s.hi, "y", true);
        var y1 = u.valToPos(s.lo, "y", true);
        ctx.fillStyle = s.color;
        ctx.globalAlpha = 0.15;
        ctx.fillRect(b.left, Math.min(y0, y1), b.width, Math.max(1, Math.abs(y1 - y0)));
        ctx.globalAlpha = 1;
      });
      (c.hlines || []).forEach(function (l, i) {
        var y = Math.round(u.valToPos(l.value, "y", true)) + 0.5;
        ctx.strokeStyle = l.color;
        ctx.lineWidth = 1.5 * devicePixelRatio;
        ctx.setLineDash(l.dash ? [6 * devicePixelRatio, 4 * devicePixelRatio] : []);
        ctx.beginPath();
        ctx.moveTo(b.left, y);
        ctx.lineTo(b.left + b.width, y);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = l.color;
        ctx.font = 11 * devicePixelRatio + "px sans-serif";
        // Labels alternate right and left, so that two close lines stay
        // readable.
        ctx.textAlign = i % 2 ? "left" : "right";
        // Above the line, or below it when the line is at the top.
        var ty = y - 14 * devicePixelRatio < b.top ? y + 13 * devicePixelRatio : y - 3 * devicePixelRatio;
        ctx.fillText(l.label, i % 2 ? b.left + 4 * devicePixelRatio : b.left + b.width - 4 * devicePixelRatio, ty);
      });
      if (c.emptyText) {
        ctx.fillStyle = css("--muted");
        ctx.font = 13 * devicePixelRatio + "px sans-serif";
        ctx.textAlign = "center";
        ctx.fillText(c.emptyText, b.left + b.width / 2, b.top + b.height / 2);
      }
      ctx.restore();
    };
  }

  function seriesOpts(c, s, i) {
    var o = {
      label: s.label,
      stroke: s.color,
      width: s.width || 1.5,
      spanGaps: false,
      points: { show: false },
      value: function (u, v) {
        return fmt(v, c.yUnit);
      },
    };
    if (s.dash) o.dash = [5, 4];
    if (s.kind === "step" || s.kind === "lane") {
      o.paths = uPlot.paths.stepped({ align: 1 });
    }
    if (s.kind === "lane") {
      o.width = s.width || 8;
      o.value = function (u, v) {
        return v == null ? "" : "active";
      };
    }
    if (s.kind === "points") {
      o.paths = function () {
        return null;
      };
      o.points = { show: true, size: s.size || 8, fill: s.color, stroke: s.color };
    }
    if (s.text) {
      o.value = function (u, v, si, idx) {
        return v == null || idx == null ? "" : s.text[idx] || "";
      };
    }
    if (s.hidden) o.show = false;
    if (s.aux) o.class = "hwp-aux";
    return o;
  }

  function axes(c) {
    var fg = css("--fg");
    var grid = css("--grid");
    var y = {
      label: c.yLabel,
      stroke: fg,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
      size: c.lanes ? 16 + 7 * Math.max.apply(null, c.lanes.map(function (l) { return l.length; }).concat([4])) : 60,
    };
    if (c.lanes) {
      y.splits = function () {
        return c.lanes.map(function (_, i) {
          return i + 1;
        });
      };
      y.values = function (u, splits) {
        return splits.map(function (v) {
          return c.lanes[v - 1] || "";
        });
      };
    }
    var x = { label: c.xLabel, stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    if (c.xWhole) x.incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];
    return [x, y];
  }

  function scales(c) {
    // No static x range: uPlot would hold to it through every zoom. The
    // page's range is set once the chart exists (makeChart).
    var x = { time: false };
    var y = {};
    if (c.emptyText) {
      y.range = [0, 1];
    } else if (c.lanes) {
      y.range = [0.3, c.lanes.length + 0.7];
    } else if (c.yMin != null && c.yMax != null && c.yMax > c.yMin) {
      y.range = [c.yMin, c.yMax];
    }
    return { x: x, y: y };
  }

  function syncZoom(u, key) {
    if (key !== "x" || syncing || !u.hwpGroup) return;
    syncing = true;
    var min = u.scales.x.min;
    var max = u.scales.x.max;
    groups[u.hwpGroup].forEach(function (o) {
      if (o !== u && (o.scales.x.min !== min || o.scales.x.max !== max)) o.setScale("x", { min: min, max: max });
    });
    syncing = false;
  }

  function zoomOut(u) {
    var c = u.hwpSpec;
    if (c.xMin != null && c.xMax != null && c.xMax > c.xMin) {
      u.setScale("x", { min: c.xMin, max: c.xMax });
    } else {
      u.setScale("x", { min: u.data[0][0], max: u.data[0][u.data[0].length - 1] });
    }
  }

  function width(el) {
    return Math.max(280, el.clientWidth - 4);
  }

  function makeChart(c) {
    var el = document.getElementById(c.id);
    if (!el) throw new Error("no element for chart " + c.id);
    if (c.emptyText) c.series = [];
    var cols = [c.x].concat(
      c.series.map(function (s) {
        return s.values;
      })
    );
    var opts = {
      width: width(el),
      height: c.height || 220,
      scales: scales(c),
      axes: axes(c),
      series: [{ label: c.xLabel, value: function (u, v) { return fmt(v, c.xUnit); } }].concat(
        c.series.map(function (s, i) {
          return seriesOpts(c, s, i);
        })
      ),
      bands: (c.bands || []).map(function (b) {
        return { series: [b.hi + 1, b.lo + 1], fill: b.color + "33" };
      }),
      cursor: {
        drag: { x: c.group !== "", y: false },
        sync: c.group ? { key: c.group } : undefined,
        // A double click zooms back out to the page's common range (uPlot's
        // own goes to the chart's data, which differs between sides).
        bind: { dblclick: function (u) { return function () { zoomOut(u); return null; }; } },
      },
      legend: { live: true },
      hooks: { draw: [overlays(c)], setScale: [syncZoom] },
    };
    var u = new uPlot(opts, cols, el);
    u.hwpSpec = c;
    if (c.xMin != null && c.xMax != null && c.xMax > c.xMin) u.setScale("x", { min: c.xMin, max: c.xMax });
    if (c.group) {
      u.hwpGroup = c.group;
      (groups[c.group] = groups[c.group] || []).push(u);
    }
    plots.push(u);
  }

  // check counts, per chart, the coloured (not grey) pixels in its plot
  // area: the series, lines and spans drawn; the grid is grey.
  function check() {
    return plots.map(function (u) {
      var b = u.bbox;
      var n = 0;
      var px = u.ctx.getImageData(Math.round(b.left), Math.round(b.top), Math.max(1, Math.round(b.width)), Math.max(1, Math.round(b.height))).data;
      for (var i = 0; i < px.length; i += 4) {
        var r = px[i], g = px[i + 1], bl = px[i + 2], a = px[i + 3];
        if (a > 64 && Math.max(r, g, bl) - Math.min(r, g, bl) > 40) n++;
      }
      return { id: u.hwpSpec.id, title: u.hwpSpec.title, pixels: n, width: b.width, expectEmpty: !!u.hwpSpec.emptyText };
    });
  }

  function render() {
    var t0 = performance.now();
    (data.charts || []).forEach(function (c) {
      try {
        makeChart(c);
      } catch (e) {
        errors.push(c.id + ": " + e.message);
      }
    });
    requestAnimationFrame(function () {
      setTimeout(function () {
        var result = { charts: check(), errors: errors, ms: performance.now() - t0, loaded: performance.now() };
        window.hwpCheck = result;
        window.hwpPlots = plots; // the uPlot instances, for tests
        var empty = result.charts.filter(function (c) {
          return c.pixels === 0 && !c.expectEmpty;
        });
        var out = document.getElementById("hwp-selfcheck");
        if (out) {
          out.textContent = result.charts.length + " charts drawn" + (empty.length ? ", empty: " + empty.map(function (c) { return c.id; }).join(" ") : "") +
            (errors.length ? "; errors: " + errors.join("; ") : "");
        }
        document.documentElement.setAttribute("data-rendered", errors.length || empty.length ? "error" : "ok");
      }, 0);
    });
  }

  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      plots.forEach(function (u) {
        u.setSize({ width: width(u.root.parentNode), height: u.height });
      });
    }, 100);
  });

  // A change of colour scheme redraws the charts with its colours.
  if (window.matchMedia) {
    var mq = window.matchMedia("(prefers-color-scheme: dark)");
    var rebuild = function () {
      plots.forEach(function (u) {
        u.destroy();
      });
      plots = [];
      groups = {};
      render();
    };
    if (mq.addEventListener) mq.addEventListener("change", rebuild);
  }

  render();
})();
