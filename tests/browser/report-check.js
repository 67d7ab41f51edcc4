// SPDX-License-Identifier: MIT
// Appended to a copy of a report by tests/cli/report.sh and run by headless Chromium: measures
// what the browser drew and writes "key=value" lines into <pre id="check"> for the test to
// compare with the runs' summary.json. Values of points and lines are read back from where
// they are on the screen through the axes' tick positions, so they test the drawing itself.
(function () {
  var out = [];
  function mid(e) { var r = e.getBoundingClientRect(); return { x: (r.left + r.right) / 2, y: (r.top + r.bottom) / 2 }; }
  // axis(g, horizontal): screen position -> value in raw units, from the first and last tick
  function axis(g, horiz) {
    var ls = [].slice.call(g.querySelectorAll("line[data-v]"));
    var a = ls[0], b = ls[ls.length - 1], pa = mid(a), pb = mid(b);
    var va = +a.getAttribute("data-v"), vb = +b.getAttribute("data-v");
    var div = +g.getAttribute("data-div");
    return function (p) {
      var t = horiz ? (p - pa.x) / (pb.x - pa.x) : (p - pa.y) / (pb.y - pa.y);
      return (va + t * (vb - va)) * div;
    };
  }
  var svgs = document.querySelectorAll("svg"), bad = 0, outside = 0, overlap = 0;
  svgs.forEach(function (s) {
    var r = s.getBoundingClientRect();
    if (!(r.width > 300 && r.height > 80)) bad++;
    s.querySelectorAll("text").forEach(function (t) {
      var q = t.getBoundingClientRect();
      if (q.left < r.left - 1 || q.right > r.right + 1 || q.top < r.top - 1 || q.bottom > r.bottom + 1) outside++;
    });
  });
  document.querySelectorAll(".xaxis").forEach(function (g) {
    var ts = [].slice.call(g.querySelectorAll("text.tick")).map(function (t) { return t.getBoundingClientRect(); });
    for (var i = 1; i < ts.length; i++) if (ts[i].left < ts[i - 1].right) overlap++;
  });
  out.push("svgs=" + svgs.length, "svg_bad=" + bad, "text_outside=" + outside, "tick_overlap=" + overlap);
  out.push("rows=" + document.querySelectorAll("#summary-table tbody tr").length);
  out.push("timelines=" + document.querySelectorAll("figure.timeline").length);
  // the over-time figures: one per measure, one line per run in each
  var ts = document.getElementById("timeline-power");
  out.push("timeline_runs=" + (ts ? ts.querySelectorAll("g.run path.ts").length : 0));
  var per = [].slice.call(document.querySelectorAll("figure.timeline")).map(function (f) {
    return f.querySelectorAll("path.ts").length;
  });
  out.push("timeline_lines=" + per.join(","));
  var sc = document.getElementById("energy-jct");
  if (sc) {
    var fx = axis(sc.querySelector(".xaxis"), true), fy = axis(sc.querySelector(".yaxis"), false);
    sc.querySelectorAll("g.point").forEach(function (p) {
      var c = mid(p.querySelector("circle")), name = p.getAttribute("data-run");
      out.push("point." + name + ".jct_s=" + fx(c.x), "point." + name + ".energy_j=" + fy(c.y));
    });
    // point labels: none overlaps another label or another run's point
    var lab = [].slice.call(sc.querySelectorAll("g.point text")).map(function (t) { return t.getBoundingClientRect(); });
    var dot = [].slice.call(sc.querySelectorAll("g.point circle")).map(function (c) { return c.getBoundingClientRect(); });
    function meet(a, b) { return a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5; }
    var lo = 0;
    for (var i = 0; i < lab.length; i++) {
      for (var j = i + 1; j < lab.length; j++) if (meet(lab[i], lab[j])) lo++;
      for (var k = 0; k < dot.length; k++) if (k != i && meet(lab[i], dot[k])) lo++;
    }
    out.push("label_overlap=" + lo);
  }
  if (ts) {
    var fyp = axis(ts.querySelector(".yaxis"), false);
    ts.querySelectorAll("g.run").forEach(function (g) {
      var name = g.getAttribute("data-run");
      out.push("peak." + name + "=" + fyp(g.querySelector("path.ts").getBoundingClientRect().top + 0.7));
      var b = g.querySelector("path.budget");
      if (b) out.push("budget." + name + "=" + fyp(mid(b).y));
    });
  }
  ["jct-cdf", "wait-cdf"].forEach(function (id) {
    var s = document.getElementById(id), fy = axis(s.querySelector(".yaxis"), false);
    s.querySelectorAll("path").forEach(function (p, i) {
      var r = p.getBoundingClientRect();
      out.push(id + "." + i + ".top=" + fy(r.top + 1), id + "." + i + ".bottom=" + fy(r.bottom - 1));
    });
  });
  var pre = document.createElement("pre");
  pre.id = "check";
  pre.textContent = "\n" + out.join("\n") + "\n";
  document.body.appendChild(pre);
})();
