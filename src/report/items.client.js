// The report's item view: plain browser JavaScript, inlined after page.client.js (src/report/page.ts). A
// run's items are script files beside the page (src/report/item-pages.ts): index.js (what the list filters
// and searches) and p<N>.js (whole items), each handing its object to window.medbenchItems. Script elements,
// not fetch, because a browser blocks fetch on file://. The view follows the URL hash:
// #run=R (its items), #run=R&item=ID (one item), #run=A&against=B (the verdicts that flipped from A to B).
"use strict";
{
  const FLAG = { parseFailure: 1, refusal: 2, apiError: 4 };
  const SHOWN = 100; // rows of the list shown at a time
  const KEPT_PAGES = 16; // pages held in memory at most
  const tasks = JSON.parse(document.getElementById("data").textContent);
  const runs = new Map(); // run name → { task, run }
  for (const task of tasks)
    for (const run of task.runs) if (run.items) runs.set(run.items.folder.split("/")[1], { task, run });

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    for (const kid of kids)
      if (kid !== null && kid !== undefined)
        node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    return node;
  }

  // Loading: one script element per file; its callback settles the promise the loader made.
  const waiting = new Map();
  const loaded = new Map();
  window.medbenchItems = (run, page, value) => {
    const key = run + "/" + page;
    loaded.set(key, value);
    if (loaded.size > KEPT_PAGES + runs.size) loaded.delete(loaded.keys().next().value);
    const done = waiting.get(key);
    if (done) done.resolve(value);
  };
  function load(run, page) {
    const key = run + "/" + page;
    if (loaded.has(key)) return Promise.resolve(loaded.get(key));
    if (!waiting.has(key)) {
      const pending = {};
      pending.promise = new Promise((resolve, reject) => Object.assign(pending, { resolve, reject }));
      waiting.set(key, pending);
      const file = runs.get(run).run.items.folder + "/" + (page === "index" ? "index" : "p" + page) + ".js";
      const script = el("script", { src: file, "data-items-file": file });
      script.onload = () => waiting.delete(key);
      script.onerror = () => {
        waiting.delete(key);
        pending.reject(new Error("could not load " + file + ": keep the .items folder beside the page"));
      };
      document.head.append(script);
    }
    return waiting.get(key).promise;
  }
  /** Items by their position in the run, loading the pages they are on. */
  async function itemsAt(run, index, positions) {
    return Promise.all(
      positions.map(async (i) => {
        const page = await load(run, Math.floor(i / index.pageSize));
        return expand(page, page.items[i % index.pageSize]);
      }),
    );
  }
  /** An item's request with its shared parts put back (item-pages.ts keeps them once per page). */
  function expand(page, item) {
    const part = (x) => (x && typeof x === "object" && "$shared" in x ? page.shared[x.$shared] : x);
    if (!item.request) return item;
    const messages = item.request.messages.map((message) => ({
      ...message,
      content: part(message.content),
    }));
    return { ...item, request: { ...item.request, messages, schema: part(item.request.schema) } };
  }

  // The URL hash: what is open.
  const hashOf = (params) =>
    "#" +
    Object.entries(params)
      .filter(([, x]) => x !== undefined && x !== null)
      .map(([name, x]) => name + "=" + encodeURIComponent(x))
      .join("&");
  const readHash = () => Object.fromEntries(new URLSearchParams(location.hash.slice(1)));

  const view = el("section", { id: "items-view", hidden: "" });
  document.body.append(view);
  const state = { run: null, against: null, index: null, other: null, rows: [], shown: SHOWN };

  async function route() {
    const params = readHash();
    if (!params.run || !runs.has(params.run)) {
      view.hidden = true;
      document.body.classList.remove("items-open");
      return;
    }
    view.hidden = false;
    document.body.classList.add("items-open");
    const against = params.against && runs.has(params.against) ? params.against : null;
    try {
      if (state.run !== params.run || state.against !== against) await openRun(params.run, against);
      await showItem(params.item ?? null);
    } catch (e) {
      view.append(el("p", { class: "items-error" }, String(e.message || e)));
    }
    view.setAttribute("data-ready", "true");
  }

  async function openRun(run, against) {
    view.removeAttribute("data-ready");
    view.replaceChildren(el("p", {}, "loading…"));
    state.index = await load(run, "index");
    state.other = against ? await load(against, "index") : null;
    Object.assign(state, { run, against, shown: SHOWN });
    view.replaceChildren(header(run, against));
    if (against) flipsView();
    else listView();
  }

  function header(run, against) {
    const { task, run: info } = runs.get(run);
    const title = against
      ? [info.model, " against ", runs.get(against).run.model]
      : [info.model, " — " + info.items.count + " items"];
    const close = el("a", { href: "#", class: "items-close", title: "back to the report" }, "✕ close");
    const head = el("header", {}, el("h2", {}, ...title), el("p", { class: "muted" }, task.slug), close);
    if (info.items.withheld)
      head.append(
        el(
          "p",
          { class: "withheld" },
          "Request and reply text is not in this report: the task's release is private (" +
            info.items.withheld +
            "); publishing them would publish the private notes. " +
            "Ids, verdicts, metadata and pairs are shown.",
        ),
      );
    return head;
  }

  // The list of one run's items, filtered.
  function listView() {
    const index = state.index;
    const controls = el("div", { class: "items-filters" });
    const facets = [];
    const select = (label, name, options) => {
      const box = el("select", { name, "aria-label": label }, el("option", { value: "" }, label + ": any"));
      for (const [value, text] of options) box.append(el("option", { value }, text));
      box.onchange = refilter;
      controls.append(box);
      facets.push(box);
    };
    if (index.meta.subset)
      select(
        "subset",
        "subset",
        index.meta.subset.values.map((x) => [x, JSON.parse(x)]),
      );
    const verdictOptions = Object.entries(index.verdicts).flatMap(([name, column]) =>
      column.values.map((x) => [name + "\u0000" + x, name + " = " + x]),
    );
    select("verdict", "verdict", verdictOptions);
    select("state", "state", [
      ["parse", "parse failure"],
      ["refusal", "refusal"],
      ["api", "API error"],
      ["clean", "none of these"],
    ]);
    const metaOptions = Object.entries(index.meta)
      .filter(([name]) => name !== "subset")
      .flatMap(([name, column]) => column.values.map((x) => [name + "\u0000" + x, name + " = " + x]));
    select("filter", "filter", metaOptions);
    const search = el("input", {
      type: "search",
      name: "search",
      placeholder: "search ids, metadata, answers",
    });
    search.oninput = refilter;
    controls.append(search);
    const count = el("p", { class: "items-count" });
    const list = el("ol", { class: "items-list" });
    const detail = el("div", { class: "items-detail" });
    view.append(controls, el("div", { class: "items-body" }, el("div", {}, count, list), detail));
    function refilter() {
      const chosen = Object.fromEntries(facets.map((box) => [box.name, box.value]));
      state.rows = matching(index, chosen, search.value.trim().toLowerCase());
      state.shown = SHOWN;
      drawList(count, list);
    }
    refilter();
  }

  function matching(index, chosen, text) {
    const coded = (column, value) => (value ? column.values.indexOf(value) : -1);
    const [verdictName, verdictValue] = chosen.verdict ? chosen.verdict.split("\u0000") : [null, null];
    const [metaName, metaValue] = chosen.filter ? chosen.filter.split("\u0000") : [null, null];
    const subset = index.meta.subset ? coded(index.meta.subset, chosen.subset) : -1;
    const verdict = verdictName ? index.verdicts[verdictName] : null;
    const verdictCode = verdict ? coded(verdict, verdictValue) : -1;
    const meta = metaName ? index.meta[metaName] : null;
    const metaCode = meta ? coded(meta, metaValue) : -1;
    const flagOf = { parse: FLAG.parseFailure, refusal: FLAG.refusal, api: FLAG.apiError };
    // Search: the id, the filter columns' values (by code), the rest of the metadata and the parsed answer.
    const hits = Object.values(index.meta).map((column) => [
      column.codes,
      new Set(column.values.flatMap((x, code) => (x.toLowerCase().includes(text) ? [code] : []))),
    ]);
    const found = (i) =>
      index.text[i].includes(text) ||
      index.ids[i].toLowerCase().includes(text) ||
      hits.some(([codes, codesFound]) => codesFound.has(codes[i]));
    const rows = [];
    for (let i = 0; i < index.count; i++) {
      if (subset >= 0 && index.meta.subset.codes[i] !== subset) continue;
      if (verdict && verdict.codes[i] !== verdictCode) continue;
      if (meta && meta.codes[i] !== metaCode) continue;
      if (
        chosen.state === "clean" ? index.flags[i] : chosen.state && !(index.flags[i] & flagOf[chosen.state])
      )
        continue;
      if (text && !found(i)) continue;
      rows.push(i);
    }
    return rows;
  }

  function drawList(count, list) {
    const index = state.index;
    count.textContent = state.rows.length + " of " + index.count + " items";
    // The verdicts the task compares on first, then the others, four at most.
    const compared = runs.get(state.run).task.compared.filter((name) => name in index.verdicts);
    const names = [...new Set([...compared, ...Object.keys(index.verdicts)])].slice(0, 4);
    list.replaceChildren(
      ...state.rows.slice(0, state.shown).map((i) => {
        const said = names.map(
          (name) => name + " " + index.verdicts[name].values[index.verdicts[name].codes[i]],
        );
        const href = hashOf({ run: state.run, item: index.ids[i] });
        return el(
          "li",
          { "data-item": index.ids[i] },
          el("a", { href }, index.ids[i]),
          " ",
          el("span", { class: "muted" }, said.join(" · ") + flagWords(index.flags[i])),
        );
      }),
    );
    if (state.rows.length > state.shown) {
      const more = el("button", { type: "button" }, "show " + SHOWN + " more");
      more.onclick = () => {
        state.shown += SHOWN;
        drawList(count, list);
      };
      list.append(el("li", {}, more));
    }
  }

  const flagWords = (flags) =>
    (flags & FLAG.parseFailure ? " · parse failure" : "") +
    (flags & FLAG.refusal ? " · refusal" : "") +
    (flags & FLAG.apiError ? " · API error" : "");

  async function showItem(id) {
    const detail = view.querySelector(".items-detail");
    if (!detail) return;
    if (id === null) return detail.replaceChildren();
    const at = state.index.ids.indexOf(id);
    if (at < 0) return detail.replaceChildren(el("p", {}, "no item " + id + " in this run"));
    if (state.against) return showFlip(detail, id, at);
    const [item] = await itemsAt(state.run, state.index, [at]);
    const unit = state.index.units[at];
    const partners = [];
    for (let i = 0; i < state.index.count; i++)
      if (state.index.units[i] === unit && i !== at) partners.push(i);
    const withPartners = await itemsAt(state.run, state.index, partners);
    detail.replaceChildren(
      ...(partners.length
        ? [el("h3", {}, "Pair " + state.index.ids[at].split("/").slice(0, -1).join("/"))]
        : []),
      el("div", { class: "items-pair" }, ...[item, ...withPartners].map((x) => itemCard(x, state.run))),
    );
    detail.setAttribute("data-shown", id);
  }

  /** One item whole: link, verdicts, parsed answer, reply, messages, metadata. */
  function itemCard(item, run) {
    const withheld = runs.get(run).run.items.withheld;
    const card = el(
      "article",
      { class: "item-card", "data-id": item.id },
      el("h3", {}, el("a", { href: hashOf({ run, item: item.id }), class: "item-link" }, item.id)),
    );
    card.append(el("h4", {}, "Verdicts"), keyValues(item.verdicts, "verdicts"));
    card.append(
      el("h4", {}, "Parsed answer"),
      el("pre", { class: "parsed" }, JSON.stringify(item.parsed, null, 1)),
    );
    if (item.parse && !item.parse.ok)
      card.append(el("p", { class: "items-error" }, "parse failure: " + (item.parse.error || "")));
    card.append(el("h4", {}, "Reply"));
    if (item.reply) card.append(replyBlock(item.reply));
    else card.append(el("p", { class: "muted" }, withheld ? "withheld (private release)" : "not kept"));
    card.append(el("h4", {}, "Messages sent"));
    if (item.request)
      for (const message of item.request.messages)
        card.append(
          el("div", { class: "message" }, el("b", {}, message.role), el("pre", {}, message.content)),
        );
    else card.append(el("p", { class: "muted" }, withheld ? "withheld (private release)" : "not kept"));
    card.append(el("h4", {}, "Metadata"), keyValues({ unit: item.unit, ...item.meta }, "meta"));
    return card;
  }

  function replyBlock(reply) {
    const box = el("div", { class: "reply" });
    if (reply.error) box.append(el("p", { class: "items-error" }, "API error: " + reply.error));
    if (reply.refusal) box.append(el("p", { class: "items-error" }, "refusal: " + reply.refusal));
    if (reply.reasoning_content)
      box.append(el("details", {}, el("summary", {}, "reasoning"), el("pre", {}, reply.reasoning_content)));
    box.append(el("pre", { class: "reply-text" }, reply.text));
    box.append(el("p", { class: "muted" }, "finish reason " + reply.finish_reason));
    return box;
  }

  function keyValues(object, name) {
    const rows = Object.entries(object).filter(([, x]) => x !== undefined);
    return el(
      "table",
      { "data-table": name },
      el(
        "tbody",
        {},
        ...rows.map(([field, x]) => el("tr", {}, el("th", {}, field), el("td", {}, JSON.stringify(x)))),
      ),
    );
  }

  // Run against run: the items whose verdict differs, by direction.
  function flipsView() {
    const [index, other] = [state.index, state.other];
    const names = Object.keys(index.verdicts).filter((name) => name in other.verdicts);
    const choose = el("select", { name: "flip-verdict", "aria-label": "verdict" });
    for (const name of names) choose.append(el("option", { value: name }, name));
    choose.value = defaultVerdict(names) || "";
    const summary = el("div", { class: "flips-summary" });
    const list = el("ol", { class: "items-list" });
    const detail = el("div", { class: "items-detail" });
    view.append(
      el("div", { class: "items-filters" }, el("label", {}, "verdict ", choose)),
      summary,
      el("div", { class: "items-body" }, list, detail),
    );
    const draw = () => drawFlips(choose.value, summary, list);
    choose.onchange = draw;
    draw();
  }

  /** The verdict the task compares runs on, else the first boolean one on which some item flipped. */
  function defaultVerdict(names) {
    const declared = runs.get(state.run).task.compared.find((name) => names.includes(name));
    if (declared) return declared;
    const boolean = names.filter((name) =>
      state.index.verdicts[name].values.every((x) => /^(true|false|null)$/.test(x)),
    );
    return boolean.find((name) => flipsOn(name).flips.length) || boolean[0] || names[0];
  }

  /** The items whose verdict `name` differs between the runs, and how many went each way. */
  function flipsOn(name) {
    const [index, other] = [state.index, state.other];
    const otherAt = new Map(other.ids.map((id, i) => [id, i]));
    const mine = index.verdicts[name],
      theirs = other.verdicts[name];
    const directions = new Map();
    const flips = [];
    for (let i = 0; i < index.count; i++) {
      const otherIndex = otherAt.get(index.ids[i]);
      if (otherIndex === undefined) continue;
      const [before, after] = [mine.values[mine.codes[i]], theirs.values[theirs.codes[otherIndex]]];
      if (before === after) continue;
      const direction = before + " → " + after;
      directions.set(direction, (directions.get(direction) || 0) + 1);
      flips.push([i, direction]);
    }
    return { flips, directions };
  }

  function drawFlips(name, summary, list) {
    const index = state.index;
    const { flips, directions } = flipsOn(name);
    const runA = runs.get(state.run).run.model,
      runB = runs.get(state.against).run.model;
    summary.replaceChildren(
      el("p", {}, flips.length + " items flipped on " + name + " (A " + runA + ", B " + runB + ")"),
      el(
        "table",
        { "data-table": "flips" },
        el("thead", {}, el("tr", {}, el("th", {}, "A → B"), el("th", {}, "items"))),
        el(
          "tbody",
          {},
          ...[...directions].map(([direction, count]) =>
            el("tr", {}, el("td", {}, direction), el("td", { class: "num" }, count)),
          ),
        ),
      ),
    );
    list.replaceChildren(
      ...flips
        .slice(0, SHOWN * 5)
        .map(([i, direction]) =>
          el(
            "li",
            { "data-item": index.ids[i] },
            el(
              "a",
              { href: hashOf({ run: state.run, against: state.against, item: index.ids[i] }) },
              index.ids[i],
            ),
            " ",
            el("span", { class: "muted" }, direction),
          ),
        ),
    );
  }

  async function showFlip(detail, id, at) {
    const otherIndex = state.other.ids.indexOf(id);
    const [mine] = await itemsAt(state.run, state.index, [at]);
    const theirs = otherIndex < 0 ? null : (await itemsAt(state.against, state.other, [otherIndex]))[0];
    const side = (label, item, run) =>
      el("div", {}, el("h3", {}, label + " " + runs.get(run).run.model), itemCard(item, run));
    detail.replaceChildren(
      el(
        "div",
        { class: "items-pair" },
        side("A", mine, state.run),
        theirs ? side("B", theirs, state.against) : "",
      ),
    );
    detail.setAttribute("data-shown", id);
  }

  // Entry points on the report: a link to each run's items, and a form to compare two runs of a task.
  function addLinks() {
    for (const task of tasks) {
      const section = document.querySelector('section[data-slug="' + task.slug + '"]');
      if (!section) continue;
      const nameOf = (dir) => {
        const run = task.runs.find((x) => x.dir === dir);
        return run && run.items ? run.items.folder.split("/")[1] : null;
      };
      // A last column, so that the tables' other columns stay where they are.
      const link = (row, dir) => {
        const name = nameOf(dir);
        const target = name ? el("a", { href: hashOf({ run: name }), class: "items-link" }, "items") : "";
        if (row) row.append(el("td", {}, target));
      };
      for (const [name, rows] of [
        ["leaderboard", task.leaderboard],
        ["runs", task.runs],
      ]) {
        const table = section.querySelector('table[data-table="' + name + '"]');
        if (!table) continue;
        table.querySelector("thead tr").append(el("th", {}, "items"));
        const trs = table.querySelectorAll("tbody tr");
        rows.forEach((row, i) => link(trs[i], row.dir));
      }
      compareForm(section, task);
    }
  }

  function compareForm(section, task) {
    const named = task.runs.filter((run) => run.items);
    if (named.length < 2) return;
    const options = () =>
      named.map((run) =>
        el("option", { value: run.items.folder.split("/")[1] }, run.model + " — " + run.dir),
      );
    const [left, right] = [
      el("select", { name: "run-a" }, ...options()),
      el("select", { name: "run-b" }, ...options()),
    ];
    right.selectedIndex = 1;
    const go = el("button", { type: "button" }, "compare");
    go.onclick = () => (location.hash = hashOf({ run: left.value, against: right.value }));
    const form = el(
      "div",
      { class: "compare-runs" },
      el("h3", {}, "Run against run"),
      "A ",
      left,
      " B ",
      right,
      " ",
      go,
    );
    const runsTable = section.querySelector('table[data-table="runs"]');
    if (runsTable) runsTable.after(form);
    else section.append(form);
  }

  addLinks();
  window.addEventListener("hashchange", route);
  route();
  document.body.setAttribute("data-items", "true");
}
