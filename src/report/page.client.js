// The report page's script: plain browser JavaScript, not compiled (src/report/report.ts inlines it, read
// at report time from the install root). Its data is the embedded JSON (#data); charts by Chart.js, inlined
// before it.
(function () {
  const tasks = JSON.parse(document.getElementById("data").textContent);
  const main = document.getElementById("tasks");
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  };
  const isMetric = (v) => v && typeof v === "object" && "ci_method" in v;
  const fmt = (m, x) =>
    x === null || x === undefined ? "–" : m.unit === "score" ? x.toFixed(2) : (100 * x).toFixed(1) + "%";
  const table = (head, rows) =>
    el(
      "table",
      {},
      el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
      el(
        "tbody",
        {},
        ...rows.map((r) =>
          el(
            "tr",
            {},
            ...r.map((c) =>
              c instanceof Node
                ? el("td", {}, c)
                : el("td", typeof c === "number" ? { class: "num" } : {}, c),
            ),
          ),
        ),
      ),
    );
  const colours = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#57606a", "#bf3989", "#0a3069"];
  const chart = (parent, config) => {
    const box = el("div", { class: "chart" });
    const c = el("canvas");
    box.append(c);
    parent.append(box);
    new Chart(c, config);
  };

  for (const task of tasks) {
    const sec = el("section", { class: "task", "data-slug": task.slug });
    sec.append(
      el("h2", {}, task.slug),
      el("p", { class: "muted" }, "spec " + task.spec + ", spec_hash ", el("code", {}, task.specHash)),
    );
    main.append(sec);
    if ((task.broken || []).length)
      sec.append(
        el("h3", {}, "Broken runs"),
        table(
          ["results folder", "why"],
          task.broken.map((b) => [b.dir, b.why]),
        ),
      );
    // Files edited since their build wrote them: listed apart, never ranked.
    if ((task.modified || []).length)
      sec.append(
        el("h3", {}, "Modified since build (not ranked)"),
        table(
          ["results folder", "what differs"],
          task.modified.map((b) => [b.dir, b.why]),
        ),
      );
    // Leaderboard: full runs by the primary metric, with their tags.
    if (task.leaderboard.length) {
      sec.append(el("h3", {}, "Leaderboard (" + (task.primary || "primary metric") + ")"));
      const lb = table(
        ["#", "model", task.primary || "primary", "95% CI", "n", "configuration", "tags", "spec"],
        task.leaderboard.map((r, i) => [
          i + 1,
          r.model,
          fmt(r, r.value),
          fmt(r, r.lo) + " – " + fmt(r, r.hi),
          r.n ?? "",
          r.configuration || "–",
          el(
            "span",
            { class: "tags" },
            [...r.tags, ...r.also.map((a) => a.metric + " " + fmt(r, a.value))].join(", "),
          ),
          r.current ? "current" : el("span", { class: "partial" }, "older spec"),
        ]),
      );
      lb.setAttribute("data-table", "leaderboard");
      sec.append(lb);
    }
    // The task's check over its roster.
    if (task.check) {
      const c = task.check;
      const verdict = c.status === "pass" ? "holds" : c.status === "fail" ? "fails" : "is incomplete";
      sec.append(el("h3", {}, "Check"));
      sec.append(
        el(
          "p",
          { class: "check-" + c.status },
          "The check " +
            verdict +
            (c.inputs === "sample"
              ? ", on the bundled SYNTHETIC sample (not the release)"
              : c.inputs === "release"
                ? ", on the release"
                : ", with no runs yet") +
            ".",
        ),
      );
      const ct = table(
        ["criterion", "status", "numbers"],
        c.criteria.map((x) => [x.id, el("span", { class: "status-" + x.status }, x.status), x.summary]),
      );
      ct.setAttribute("data-table", "check");
      sec.append(ct);
      if (c.missing.length)
        sec.append(
          el(
            "ul",
            { class: "missing" },
            ...c.missing.map((m) => el("li", {}, m.role + " (" + m.model + "): " + m.reason)),
          ),
        );
    }
    if (!task.runs.length) {
      sec.append(el("p", {}, "No runs yet: medbench build " + task.spec));
      continue;
    }
    // Runs.
    sec.append(el("h3", {}, "Runs"));
    sec.append(
      table(
        ["model", "primary metric", "95% CI", "n", "spec hash", "partial", "thinking off", "API errors"],
        task.runs.map((r) => {
          const m = r.metrics,
            p = m.metrics[m.primary] || {};
          return [
            m.synthetic_sample
              ? el(
                  "span",
                  {},
                  r.model + " ",
                  el("span", { class: "partial" }, "(synthetic sample: says nothing about the model)"),
                )
              : r.model,
            m.primary + " " + fmt(p, p.value),
            fmt(p, p.lo) + " – " + fmt(p, p.hi) + " (" + (p.ci_method || "") + ")",
            p.n ?? "",
            el("code", {}, String(m.spec_hash).slice(0, 12)),
            r.partial ? el("span", { class: "partial" }, "partial") : "no",
            m.metrics.thinking_audit ? String(m.metrics.thinking_audit.thinking_off) : "–",
            m.metrics.api_errors ?? 0,
          ];
        }),
      ),
    );
    sec.lastChild.setAttribute("data-table", "runs");
    // Forest plot: every metric of every run, point and interval, on its own unit.
    const rows = [];
    for (const r of task.runs)
      for (const [name, m] of Object.entries(r.metrics.metrics))
        if (isMetric(m) && m.value !== null && m.unit !== "score")
          rows.push({ label: r.model + (r.partial ? " (partial)" : "") + " · " + name, m });
    if (rows.length) {
      sec.append(el("h3", {}, "Intervals (forest plot)"));
      chart(sec, {
        type: "bar",
        data: {
          labels: rows.map((x) => x.label),
          datasets: [
            {
              type: "bar",
              label: "95% interval",
              data: rows.map((x) => [100 * x.m.lo, 100 * x.m.hi]),
              backgroundColor: "rgba(9,105,218,0.35)",
              barPercentage: 0.5,
            },
            {
              type: "line",
              label: "point",
              data: rows.map((x) => 100 * x.m.value),
              showLine: false,
              pointRadius: 4,
              backgroundColor: "#1d232a",
              borderColor: "#1d232a",
            },
          ],
        },
        options: {
          indexAxis: "y",
          responsive: true,
          maintainAspectRatio: false,
          animation: false,
          scales: { x: { min: 0, max: 100, title: { display: true, text: "%" } } },
        },
      });
      sec.lastChild.style.height = Math.max(200, 22 * rows.length + 60) + "px";
    }
    // Breakdowns: the task's primary metric by each kind of group (a task that declares no primary has no
    // metric to chart them by, and says so).
    const kinds = new Set();
    for (const r of task.runs)
      for (const k of Object.keys((r.metrics.tables && r.metrics.tables.breakdowns) || {})) kinds.add(k);
    if (kinds.size && !task.primary)
      sec.append(
        el(
          "p",
          { class: "muted" },
          "Breakdowns (" + [...kinds].join(", ") + ") not charted: no primary metric.",
        ),
      );
    for (const kind of task.primary ? kinds : []) {
      const labels = [
        ...new Set(
          task.runs.flatMap((r) => Object.keys(((r.metrics.tables || {}).breakdowns || {})[kind] || {})),
        ),
      ];
      const by = (b) => (b && task.primary in b ? b[task.primary] : null);
      sec.append(el("h3", {}, task.primary.replace("_", " ") + " by " + kind.replace("_", " ")));
      chart(sec, {
        type: "bar",
        data: {
          labels,
          datasets: task.runs.map((r, i) => ({
            label: r.model + (r.partial ? " (partial)" : ""),
            data: labels.map((l) => {
              const b = ((r.metrics.tables.breakdowns || {})[kind] || {})[l];
              const v = by(b);
              return v === null || v === undefined ? null : 100 * v;
            }),
            backgroundColor: colours[i % colours.length],
          })),
        },
        options: {
          responsive: true,
          maintainAspectRatio: false,
          animation: false,
          scales: { y: { min: 0, max: 100, title: { display: true, text: "%" } } },
        },
      });
    }
    // Paired comparisons.
    const paired = task.runs.flatMap((r) =>
      Object.entries(r.metrics.paired || {}).map(([name, c]) => [
        r.model,
        c.label || name,
        c.diff_pp.toFixed(1),
        c.lo.toFixed(1) + " – " + c.hi.toFixed(1),
        c.mcnemar_p.toPrecision(3),
        c.b + " / " + c.c,
      ]),
    );
    if (paired.length) {
      sec.append(el("h3", {}, "Paired comparisons (A − B, percentage points)"));
      sec.append(table(["run", "comparison", "difference", "95% CI", "McNemar p", "b / c"], paired));
    }
    // Audit facts.
    sec.append(el("h3", {}, "Audit"));
    for (const r of task.runs) {
      const m = r.metrics.metrics;
      sec.append(
        el(
          "details",
          {},
          el("summary", {}, r.model + " — " + r.dir),
          table(
            ["fact", "value"],
            [
              ["request fields sent", el("pre", {}, JSON.stringify(m.request, null, 1))],
              ["response formats", el("code", {}, JSON.stringify(m.response_format))],
              ["thinking audit", el("code", {}, JSON.stringify(m.thinking_audit))],
              ["API errors / truncated", (m.api_errors ?? 0) + " / " + (m.truncated ?? 0)],
              ["parse failures", String((r.metrics.tables || {}).parse_failures ?? "–")],
              ["notices", r.notices.length ? el("pre", {}, r.notices.join("\n")) : "none"],
              ["medbench, hash recipe", r.metrics.medbench_version + ", " + r.metrics.hash_recipe],
            ],
          ),
        ),
      );
    }
  }
  document.body.setAttribute("data-rendered", "true");
})();
