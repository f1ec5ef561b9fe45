// The report page's script: plain browser JavaScript, not compiled (src/report/report.ts inlines it, read
// at report time from the install root). Its data is the embedded JSON (#data); charts by Chart.js, inlined
// before it.
"use strict";
// A block, so that the page's names stay out of its global scope (strict: functions too).
{
  const colours = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#57606a", "#bf3989", "#0a3069"];

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    for (const kid of kids) node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    return node;
  }

  const isMetric = (value) => value && typeof value === "object" && "ci_method" in value;

  /** A value of a metric: a score with two decimals, a proportion as a percentage. */
  const fmt = (metric, x) =>
    x === null || x === undefined
      ? "–"
      : metric.unit === "score"
        ? x.toFixed(2)
        : (100 * x).toFixed(1) + "%";

  const cell = (content) =>
    content instanceof Node
      ? el("td", {}, content)
      : el("td", typeof content === "number" ? { class: "num" } : {}, content);

  function table(head, rows) {
    return el(
      "table",
      {},
      el("thead", {}, el("tr", {}, ...head.map((title) => el("th", {}, title)))),
      el("tbody", {}, ...rows.map((row) => el("tr", {}, ...row.map(cell)))),
    );
  }

  function chart(parent, config) {
    const box = el("div", { class: "chart" });
    const canvas = el("canvas");
    box.append(canvas);
    parent.append(box);
    new Chart(canvas, config);
  }

  function setAsideTables(sec, task) {
    // Files edited since their build wrote them: listed apart, never ranked.
    const lists = [
      [task.broken, "Broken runs", "why"],
      [task.modified, "Modified since build (not ranked)", "what differs"],
    ];
    for (const [runs, title, why] of lists)
      if ((runs || []).length)
        sec.append(
          el("h3", {}, title),
          table(
            ["results folder", why],
            runs.map((run) => [run.dir, run.why]),
          ),
        );
  }

  /** A run's deviations from its spec (metrics.json deviations) as a mark beside its model: the fields, and
   *  each deviation in full on hover (the run's details list them too). */
  function withDeviations(model, deviations) {
    if (!deviations || !deviations.length) return model;
    const fields = [...new Set(deviations.map((x) => x.field))].join(", ");
    const said = (x) =>
      x.field +
      ": the spec asks " +
      JSON.stringify(x.spec) +
      ", " +
      (x.omitted ? "left out" : "sent " + JSON.stringify(x.sent)) +
      " (rule " +
      x.rule +
      ")";
    const mark = el(
      "span",
      { class: "deviates", title: deviations.map(said).join("\n") },
      "⚠ deviates: " + fields,
    );
    return el("span", {}, model, " ", mark);
  }

  /** Full runs by the primary metric, with their tags. */
  function leaderboard(sec, task) {
    sec.append(el("h3", {}, "Leaderboard (" + (task.primary || "primary metric") + ")"));
    // The check's metrics shown beside the headline (e.g. the strict parser's BCR), each with its interval.
    const beside = (task.leaderboard[0] && task.leaderboard[0].beside) || [];
    const board = table(
      [
        "#",
        "model",
        task.primary || "primary",
        "95% CI",
        ...beside.map((metric) => metric.metric + " (95% CI)"),
        "n",
        "configuration",
        "tags",
        "spec",
      ],
      task.leaderboard.map((row, i) => [
        // A model fine-tuned on the task's data is listed, unranked, below the headline.
        row.headline
          ? i + 1
          : el("span", { class: "off-headline", title: "fine-tuned: off the headline" }, "–"),
        withDeviations(row.model, row.deviations),
        fmt(row, row.value),
        fmt(row, row.lo) + " – " + fmt(row, row.hi),
        ...(row.beside || []).map(
          (metric) =>
            fmt(row, metric.value) + " (" + fmt(row, metric.lo) + " – " + fmt(row, metric.hi) + ")",
        ),
        row.n ?? "",
        row.configuration || "–",
        el(
          "span",
          { class: "tags" },
          [...row.tags, ...row.also.map((also) => also.metric + " " + fmt(row, also.value))].join(", "),
        ),
        row.current ? "current" : el("span", { class: "partial" }, "older spec"),
      ]),
    );
    board.setAttribute("data-table", "leaderboard");
    sec.append(board);
  }

  /** What the check's runs were built from, as the page says it (null: no runs yet). */
  const INPUTS_SAID = {
    sample: ", on the bundled SYNTHETIC sample (not the release)",
    release: ", on the release",
  };

  /** The task's check over its roster. */
  function checkSection(sec, check) {
    const verdict = check.status === "pass" ? "holds" : check.status === "fail" ? "fails" : "is incomplete";
    const inputs = INPUTS_SAID[check.inputs] || ", with no runs yet";
    sec.append(el("h3", {}, "Check"));
    sec.append(el("p", { class: "check-" + check.status }, "The check " + verdict + inputs + "."));
    const criteria = table(
      ["criterion", "status", "numbers"],
      check.criteria.map((criterion) => [
        criterion.id,
        el("span", { class: "status-" + criterion.status }, criterion.status),
        criterion.summary,
      ]),
    );
    criteria.setAttribute("data-table", "check");
    sec.append(criteria);
    if (check.missing.length)
      sec.append(
        el(
          "ul",
          { class: "missing" },
          ...check.missing.map((absent) =>
            el("li", {}, absent.role + " (" + absent.model + "): " + absent.reason),
          ),
        ),
      );
  }

  function runRow(run) {
    const metrics = run.metrics,
      primary = metrics.metrics[metrics.primary] || {};
    const model = metrics.synthetic_sample
      ? el(
          "span",
          {},
          run.model + " ",
          el("span", { class: "partial" }, "(synthetic sample: says nothing about the model)"),
        )
      : run.model;
    return [
      withDeviations(model, metrics.deviations),
      metrics.primary + " " + fmt(primary, primary.value),
      fmt(primary, primary.lo) + " – " + fmt(primary, primary.hi) + " (" + (primary.ci_method || "") + ")",
      primary.n ?? "",
      el("code", {}, String(metrics.spec_hash).slice(0, 12)),
      run.partial ? el("span", { class: "partial" }, "partial") : "no",
      metrics.metrics.thinking_audit ? String(metrics.metrics.thinking_audit.thinking_off) : "–",
      metrics.metrics.api_errors ?? 0,
      run.cost,
    ];
  }

  function runsTable(sec, task) {
    sec.append(el("h3", {}, "Runs"));
    sec.append(
      table(
        [
          "model",
          "primary metric",
          "95% CI",
          "n",
          "spec hash",
          "partial",
          "thinking off",
          "API errors",
          "cost",
        ],
        task.runs.map(runRow),
      ),
    );
    sec.lastChild.setAttribute("data-table", "runs");
  }

  /** Every metric of every run, point and interval: proportions on a % axis, scores (MCC, ratios) on their
   *  own scale. */
  function forestPlot(sec, task) {
    forestOf(sec, task, false);
    forestOf(sec, task, true);
  }

  function forestOf(sec, task, scores) {
    const rows = [];
    for (const run of task.runs)
      for (const [name, metric] of Object.entries(run.metrics.metrics))
        if (isMetric(metric) && metric.value !== null && (metric.unit === "score") === scores)
          rows.push({ label: run.model + (run.partial ? " (partial)" : "") + " · " + name, metric });
    if (!rows.length) return;
    const scale = scores ? 1 : 100;
    const ends = rows.flatMap((x) => [x.metric.lo, x.metric.hi, x.metric.value]).filter(Number.isFinite);
    const axis = scores
      ? { min: Math.min(0, ...ends), max: Math.max(1, ...ends), title: { display: true, text: "score" } }
      : { min: 0, max: 100, title: { display: true, text: "%" } };
    sec.append(el("h3", {}, scores ? "Scores (forest plot)" : "Intervals (forest plot)"));
    chart(sec, {
      type: "bar",
      data: {
        labels: rows.map((x) => x.label),
        datasets: [
          {
            type: "bar",
            label: "95% interval",
            data: rows.map((x) => [scale * x.metric.lo, scale * x.metric.hi]),
            backgroundColor: "rgba(9,105,218,0.35)",
            barPercentage: 0.5,
          },
          {
            type: "line",
            label: "point",
            data: rows.map((x) => scale * x.metric.value),
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
        scales: { x: axis },
      },
    });
    sec.lastChild.setAttribute("data-chart", scores ? "forest-scores" : "forest");
    sec.lastChild.setAttribute("data-labels", JSON.stringify(rows.map((x) => x.label)));
    sec.lastChild.style.height = Math.max(200, 22 * rows.length + 60) + "px";
  }

  // The task's primary metric by each kind of group (a task that declares no primary has no metric to
  // chart them by, and says so).
  function breakdowns(sec, task) {
    const kinds = new Set();
    for (const run of task.runs)
      for (const breakdown of Object.keys((run.metrics.tables && run.metrics.tables.breakdowns) || {}))
        kinds.add(breakdown);
    if (kinds.size && !task.primary)
      sec.append(
        el(
          "p",
          { class: "muted" },
          "Breakdowns (" + [...kinds].join(", ") + ") not charted: no primary metric.",
        ),
      );
    for (const kind of task.primary ? kinds : []) breakdownChart(sec, task, kind);
  }

  function breakdownChart(sec, task, kind) {
    const groupsOf = (run) => ((run.metrics.tables || {}).breakdowns || {})[kind] || {};
    const labels = [...new Set(task.runs.flatMap((run) => Object.keys(groupsOf(run))))];
    const primaryOf = (group) => (group && task.primary in group ? group[task.primary] : null);
    // Each cell's count (its `n`): on the axis when every run has the same, in the tooltip always.
    const countOf = (run, label) => (groupsOf(run)[label] || {}).n;
    const axisLabels = labels.map((label) => {
      const counts = new Set(
        task.runs.map((run) => countOf(run, label)).filter((count) => count !== undefined),
      );
      return counts.size === 1 ? label + " (n=" + [...counts][0] + ")" : label;
    });
    sec.append(el("h3", {}, task.primary.replace("_", " ") + " by " + kind.replace("_", " ")));
    chart(sec, {
      type: "bar",
      data: {
        labels: axisLabels,
        datasets: task.runs.map((run, i) => ({
          label: run.model + (run.partial ? " (partial)" : ""),
          data: labels.map((label) => {
            const value = primaryOf(((run.metrics.tables.breakdowns || {})[kind] || {})[label]);
            return value === null || value === undefined ? null : 100 * value;
          }),
          backgroundColor: colours[i % colours.length],
        })),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { y: { min: 0, max: 100, title: { display: true, text: "%" } } },
        plugins: {
          tooltip: {
            callbacks: {
              footer: (items) =>
                items.map(
                  (item) => "n = " + (countOf(task.runs[item.datasetIndex], labels[item.dataIndex]) ?? "–"),
                ),
            },
          },
        },
      },
    });
    sec.lastChild.setAttribute("data-chart", "breakdown-" + kind);
    sec.lastChild.setAttribute("data-labels", JSON.stringify(axisLabels));
  }

  function pairedTable(sec, task) {
    const paired = task.runs.flatMap((run) =>
      Object.entries(run.metrics.paired || {}).map(([name, comparison]) => [
        run.model,
        comparison.label || name,
        comparison.diff_pp.toFixed(1),
        comparison.lo.toFixed(1) + " – " + comparison.hi.toFixed(1),
        comparison.mcnemar_p.toPrecision(3),
        comparison.b + " / " + comparison.c,
      ]),
    );
    if (!paired.length) return;
    sec.append(el("h3", {}, "Paired comparisons (A − B, percentage points)"));
    sec.append(table(["run", "comparison", "difference", "95% CI", "McNemar p", "b / c"], paired));
  }

  /** The run's parse failures: the count its task's tables record, and per side where the task splits
   *  them. */
  function parseFailures(metrics) {
    const tables = metrics.tables || {};
    const counts = tables.counts || {};
    const sides = Object.keys(counts).filter((name) => name.startsWith("parse_failures_"));
    const total =
      tables.parse_failures ?? (sides.length ? sides.reduce((sum, side) => sum + counts[side], 0) : null);
    if (total === null || total === undefined) return "–";
    const split = sides.map((side) => side.slice("parse_failures_".length) + " " + counts[side]).join(", ");
    return String(total) + (split ? " (" + split + ")" : "");
  }

  /** The mean ± SD of each metric over the request configurations of a run built with several. */
  function overConfigurations(sec, task) {
    const runs = task.runs.filter((run) => run.metrics.over_configurations);
    for (const run of runs) {
      const over = run.metrics.over_configurations;
      const names = Object.keys(over).filter((name) => over[name].n);
      const configurations = Object.keys(over[names[0]] ? over[names[0]].values : {});
      const unit = (name) => (run.metrics.configurations || {})[configurations[0]]?.metrics?.[name] || {};
      sec.append(el("h3", {}, "Over configurations: " + run.model + " (mean ± SD, n − 1)"));
      const rows = names.map((name) => [
        name,
        fmt(unit(name), over[name].mean) + " ± " + fmt(unit(name), over[name].sd),
        over[name].n,
        ...configurations.map((conf) => fmt(unit(name), over[name].values[conf])),
      ]);
      sec.append(table(["metric", "mean ± SD", "n", ...configurations], rows));
      sec.lastChild.setAttribute("data-table", "over-configurations");
    }
  }

  function auditFacts(run) {
    const metrics = run.metrics.metrics;
    return el(
      "details",
      {},
      el("summary", {}, run.model + " — " + run.dir),
      table(
        ["fact", "value"],
        [
          ["request fields sent", el("pre", {}, JSON.stringify(metrics.request, null, 1))],
          ["response formats", el("code", {}, JSON.stringify(metrics.response_format))],
          ["thinking audit", el("code", {}, JSON.stringify(metrics.thinking_audit))],
          [
            "deviations from the spec",
            run.metrics.deviations && run.metrics.deviations.length
              ? el("pre", {}, JSON.stringify(run.metrics.deviations, null, 1))
              : "none",
          ],
          ["API errors / truncated", (metrics.api_errors ?? 0) + " / " + (metrics.truncated ?? 0)],
          ["parse failures", parseFailures(run.metrics)],
          ["notices", run.notices.length ? el("pre", {}, run.notices.join("\n")) : "none"],
          ["medbench, hash recipe", run.metrics.medbench_version + ", " + run.metrics.hash_recipe],
        ],
      ),
    );
  }

  function renderTask(main, task) {
    const sec = el("section", { class: "task", "data-slug": task.slug });
    sec.append(
      el("h2", {}, task.slug),
      el("p", { class: "muted" }, "spec " + task.spec + ", spec_hash ", el("code", {}, task.specHash)),
    );
    main.append(sec);
    setAsideTables(sec, task);
    if (task.leaderboard.length) leaderboard(sec, task);
    if (task.check) checkSection(sec, task.check);
    if (!task.runs.length) {
      sec.append(el("p", {}, "No runs yet: medbench build " + task.spec));
      return;
    }
    runsTable(sec, task);
    forestPlot(sec, task);
    breakdowns(sec, task);
    overConfigurations(sec, task);
    pairedTable(sec, task);
    sec.append(el("h3", {}, "Audit"));
    for (const run of task.runs) sec.append(auditFacts(run));
  }

  const main = document.getElementById("tasks");
  for (const task of JSON.parse(document.getElementById("data").textContent)) renderTask(main, task);
  document.body.setAttribute("data-rendered", "true");
}
