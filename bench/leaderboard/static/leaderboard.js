// The leaderboard page's script (bench.leaderboard.page inlines it into leaderboard.html).
// It renders the table, filters and privacy-utility plots from the embedded leaderboard.json
// (the JSON script element #leaderboard-data); every string from the data reaches
// the DOM as text or escaped (esc). The page's limits come from <body data-row-limit
// data-plot-limit>, the known-answer mechanisms that mark the ends of the scale from
// <body data-known-answers> (bench.leaderboard.page.KNOWN_ANSWERS). docs/leaderboard.md
// describes the data and the page.
(function () {
  "use strict";
  var T0 = performance.now();
  var body = document.body;
  var ROW_LIMIT = parseInt(body.getAttribute("data-row-limit"), 10) || 1000;
  var PLOT_LIMIT = parseInt(body.getAttribute("data-plot-limit"), 10) || 6;
  var KNOWN = {};
  try { KNOWN = JSON.parse(body.getAttribute("data-known-answers") || "{}"); } catch (err) { }
  function fail(msg) {
    var p = document.getElementById("error");
    p.textContent = msg; p.hidden = false;
    body.setAttribute("data-rendered-ms", performance.now().toFixed(1));
    body.setAttribute("data-error", "1");
  }
  var DATA;
  try {
    DATA = JSON.parse(document.getElementById("leaderboard-data").textContent);
  } catch (err) { fail("The embedded leaderboard data cannot be read: " + err); return; }
  var T_PARSE = performance.now();

  // ------------------------------------------------------------------ helpers
  var ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return ESC[c]; }); }
  function isObj(x) { return x !== null && typeof x === "object" && !Array.isArray(x); }
  function arr(x) { return Array.isArray(x) ? x : []; }
  function num(x) { return typeof x === "number" && isFinite(x) ? x : null; }
  function txt(x) { return x === null || x === undefined ? null : String(x); }
  function f3(x) { var v = num(x); return v === null ? "\u2014" : v.toFixed(3); }
  function withCi(v, ci) {
    var s = f3(v);
    if (num(v) !== null && Array.isArray(ci) && ci.length === 2 && num(ci[0]) !== null &&
        num(ci[1]) !== null) { s += " [" + f3(ci[0]) + ", " + f3(ci[1]) + "]"; }
    return s;
  }
  function fmtEps(e) {
    if (e === "inf" || e === Infinity) { return "\u221e"; }
    var v = num(e); return v === null ? String(e) : String(v);
  }
  function epsVal(e) { return e === "inf" ? Infinity : (num(e) === null ? NaN : e); }
  function safeUrl(u) {
    return typeof u === "string" && /^(https?|file):/i.test(u) ? u : null;
  }
  function link(u, label) {
    if (u === null || u === undefined) { return ""; }
    var ok = safeUrl(u);
    if (ok === null) {
      return '<span class="badlink" title="not a file/http link: not made clickable">' +
        esc(label) + ": " + esc(u) + "</span>";
    }
    return '<a href="' + esc(ok) + '" rel="noopener noreferrer">' + esc(label) + "</a>";
  }

  // ------------------------------------------------------------------ data
  var ENTRIES = arr(DATA.entries).filter(isObj);
  var BOARDS = arr(DATA.boards).filter(isObj);
  var boardById = new Map(), boardIdx = new Map();
  BOARDS.forEach(function (b, k) {
    boardById.set(String(b.id), b); boardIdx.set(String(b.id), k);
  });
  var sourceById = new Map();
  arr(DATA.sources).filter(isObj).forEach(function (s) { sourceById.set(String(s.id), s); });
  function boardText(b) {  // the board in words (its title; older documents: its key)
    if (typeof b.title === "string" && b.title) { return b.title; }
    return [b.dataset, b.utility_task, b.private_attribute, b.suite_version]
      .filter(function (x) { return x !== null && x !== undefined && x !== ""; })
      .map(String).join(" \u00b7 ");
  }
  var N = ENTRIES.length;
  var ORD = new Array(N), BTEXT = new Array(N), BIDX = new Array(N);
  (function () {
    var pos = new Map(), k = 0;
    BOARDS.forEach(function (b) {
      arr(b.entries).forEach(function (id) {
        if (!pos.has(String(id))) { pos.set(String(id), k++); }
      });
    });
    ENTRIES.forEach(function (e, i) {
      var p = pos.get(String(e.id));
      ORD[i] = p === undefined ? k + i : p;
      var b = boardById.get(String(e.board));
      BIDX[i] = b ? boardIdx.get(String(e.board)) : -1;
      BTEXT[i] = b ? boardText(b) : boardText({dataset: e.dataset, suite_version: e.suite_version});
    });
  })();
  function configText(e) {
    if (e.config !== null && e.config !== undefined) { return String(e.config); }
    return [e.mechanism, "sens=" + e.sensitivity, "map=" + e.mapping].join(" \u00b7 ");
  }
  function known(mech) {  // the known-answer record of a mechanism (by name), or null
    var name = txt(mech) === null ? "" : String(mech).split("(")[0].trim();
    return Object.prototype.hasOwnProperty.call(KNOWN, name) && isObj(KNOWN[name])
      ? KNOWN[name] : null;
  }
  function endBadge(k) {  // the mark of a known answer: which end of the scale it is
    return ' <span class="end end-' + esc(k.end) + '" title="' + esc(k.text || "") + '">' +
      esc(k.end === "utility" ? "utility-0 end" : "privacy-0 end") + "</span>";
  }
  // A configuration's name shows what differs between the configurations of its board:
  // the mechanism (its label holds the parameters that differ), and the sensitivity approach,
  // mapping and suite version where they differ; what they share is said once per board.
  var NAME = new Array(N), COMMON = new Map();
  (function () {
    var PARTS = [["sensitivity", "sens=", "sensitivity "], ["mapping", "map=", "mapping "],
                 ["suite_version", "suite ", "suite "]];
    var per = new Map();
    ENTRIES.forEach(function (e) {
      var k = String(e.board);
      if (!per.has(k)) { per.set(k, PARTS.map(function () { return new Set(); })); }
      PARTS.forEach(function (p, j) { per.get(k)[j].add(txt(e[p[0]])); });
    });
    ENTRIES.forEach(function (e, i) {
      if (txt(e.mechanism) === null) { NAME[i] = configText(e); return; }
      var s = per.get(String(e.board)), bits = [String(e.mechanism)];
      PARTS.forEach(function (p, j) {
        if (s[j].size > 1 && txt(e[p[0]])) { bits.push(p[1] + e[p[0]]); }
      });
      NAME[i] = bits.join(" \u00b7 ");
    });
    per.forEach(function (s, k) {
      var bits = [];
      PARTS.forEach(function (p, j) {
        var v = Array.from(s[j])[0];
        if (s[j].size === 1 && v) { bits.push(p[2] + v); }
      });
      COMMON.set(k, bits.join(", "));
    });
  })();
  function keyText(k) {  // a key id shown by its first 16 hex digits
    var t = txt(k) || "";
    return t.length > 24 ? t.slice(0, 24) + "\u2026" : t;
  }
  function signerText(sg) {  // a verified signer: the keyring's name, else the key
    if (!isObj(sg)) { return "unsigned"; }
    return txt(sg.name) !== null ? String(sg.name) + " (" + keyText(sg.key) + ")"
      : "unknown key " + keyText(sg.key);
  }
  function signedText(e) {  // who signed the cells an entry's points use
    var names = arr(e.signed_by).map(signerText);
    var n = num(e.unsigned_cells);
    if (!names.length) { return "unsigned"; }
    return names.join(", ") + (n ? " + " + n + " unsigned" : "");
  }
  function cellsOf(e) {
    var out = [];
    arr(e.points).forEach(function (q) {
      if (isObj(q)) { arr(q.cells).forEach(function (c) { if (isObj(c)) { out.push([q, c]); } }); }
    });
    return out;
  }
  function paretoCount(e) {
    return arr(e.points).filter(function (q) { return isObj(q) && q.pareto === true; }).length;
  }
  var AUDIT_KEY = {"VIOLATION": 2, "PASS": 1, "not audited": 0};

  // ------------------------------------------------------------------ columns
  var COLS = [
    {id: "rank", label: "Rank", key: function (e) { return num(e.rank); }},
    {id: "config", label: "Configuration", key: function (e, i) { return NAME[i]; }},
    {id: "model", label: "Model", key: function (e) { return txt(e.model); }},
    {id: "score", label: "Score [95% CI]", key: function (e) { return num(e.score); }},
    {id: "epsilon", label: "\u03b5 (\u2605 Pareto)", key: function (e) { return paretoCount(e); }},
    {id: "guarantee", label: "Guarantee", key: function (e) { return txt(e.guarantee); }},
    {id: "audit", label: "Audit", key: function (e) {
      var v = AUDIT_KEY[e.audit]; return v === undefined ? null : v; }},
    {id: "signed", label: "Signed by", key: signedText},
    {id: "cells", label: "Cells", key: function (e) { return cellsOf(e).length; }}
  ];
  var COL = new Map(COLS.map(function (c) { return [c.id, c]; }));
  var KEYS = new Map();  // column id -> precomputed keys (built on first sort)
  function keysOf(id) {
    if (!KEYS.has(id)) {
      var c = COL.get(id);
      KEYS.set(id, ENTRIES.map(function (e, i) {
        var v = c.key(e, i); return v === undefined ? null : v;
      }));
    }
    return KEYS.get(id);
  }

  // ------------------------------------------------------------------ row html
  function rankCell(e) {
    var r = num(e.rank), flag = txt(e.rank_flag) || "";
    if (r === null) {
      return '<td class="num rank" title="' + esc(flag ? "unranked: " + flag : "unranked") +
        '">\u2014' + (flag ? ' <span class="why">(' + esc(flag) + ")</span>" : "") + "</td>";
    }
    var mark = "";
    if (flag === "no interval") {
      mark = '<span class="flag" title="no interval: ranked by the score alone">\u2020</span>';
    } else if (flag === "audit violation") {
      mark = '<span class="flag" title="audit violation: ranked after every entry that ' +
        'passed or was not audited">\u26a0</span>';
    } else if (flag) {
      mark = '<span class="flag" title="' + esc(flag) + '">*</span>';
    }
    var ver = isObj(e.verification) ? txt(e.verification.status) : null;
    if (ver === "verified") {
      mark += '<span class="flag" title="verified: its recomputed cells are bit-exact">' +
        "\u2713</span>";
    } else if (ver === "unverified") {
      mark += '<span class="flag" title="unverified: no recomputed cell could confirm it">?</span>';
    }
    return '<td class="num rank">' + r + mark + "</td>";
  }
  function scoreCell(e) {
    if (num(e.score) === null) {
      return '<td class="num" title="' + esc("no score" + (e.rank_flag ? ": " + e.rank_flag : "")) +
        '">\u2014</td>';
    }
    var ci = Array.isArray(e.score_ci);
    var n = num(e.score_seeds);
    var rest = withCi(e.score, e.score_ci).slice(f3(e.score).length) +
      (n === null ? "" : " n=" + n);
    return '<td class="num score"' + (ci ? "" : ' title="no interval"') + '><span class="sv">' +
      esc(f3(e.score)) + '</span><span class="ci">' + esc(rest) + "</span></td>";
  }
  function auditCell(e) {
    var a = txt(e.audit);
    var cls = a === "VIOLATION" ? "audit-violation" : a === "PASS" ? "audit-pass" : "audit-none";
    return '<td class="' + cls + '">' + esc(a === null ? "\u2014" : a) + "</td>";
  }
  function miaText(m) {  // the membership-inference AUC of a point, or null
    if (!isObj(m)) { return null; }
    if (m.valid === false) { return "no valid MIA"; }
    var s = "MIA AUC " + withCi(m.auc, m.auc_ci);
    if (txt(m.attack) !== null) { s += " (" + m.attack + ")"; }
    return m.valid === true ? s : s + " (not valid on every seed)";
  }
  var MLABELS = isObj(DATA.measure_labels) ? DATA.measure_labels : {};
  function measuresText(m) {  // "Reconstruction top-1 0.337, S_w (mean) 12.1", or null
    if (!isObj(m)) { return null; }
    var bits = Object.keys(m).filter(function (k) { return num(m[k]) !== null; })
      .map(function (k) { return (txt(MLABELS[k]) === null ? k : MLABELS[k]) + " " + f3(m[k]); });
    return bits.length ? bits.join(", ") : null;
  }
  function pointTitle(q) {
    var s = "\u03b5=" + fmtEps(q.epsilon) + ": utility " + withCi(q.utility, q.utility_ci);
    if (q.privacy_valid === false || num(q.privacy) === null) {
      s += ", no valid privacy measurement";
    } else {
      s += ", privacy " + withCi(q.privacy, q.privacy_ci) +
        (q.privacy_valid === true ? "" : " (validity unknown)");
    }
    if (q.adversary !== null && q.adversary !== undefined) { s += " (" + q.adversary + ")"; }
    if (num(q.n_w) !== null) { s += ", N_w " + f3(q.n_w); }
    var mia = miaText(q.mia);
    if (mia !== null) { s += ", " + mia; }
    var ms = measuresText(q.measures);
    if (ms !== null) { s += ", " + ms; }
    if (txt(q.audit) !== null) { s += ", audit " + q.audit; }
    if (q.pareto === true) { s += ", on the Pareto front"; }
    return s;
  }
  function pointValues(q) {  // the means beside an ε: U utility, P privacy, N_w, MIA AUC
    var bits = ["U " + f3(q.utility)];
    if (q.privacy_valid === false) { bits.push("P no valid"); }
    else if (num(q.privacy) !== null) { bits.push("P " + f3(q.privacy)); }
    if (num(q.n_w) !== null) { bits.push("N_w " + f3(q.n_w)); }
    if (isObj(q.mia)) { bits.push("MIA " + (q.mia.valid === false ? "no valid" : f3(q.mia.auc))); }
    return bits.join(" \u00b7 ");
  }
  function epsMark(q) {  // an ε with its marks (★ Pareto, ⚠ audit violation); hover: values
    var front = q.pareto === true, bad = q.audit === "VIOLATION";
    return '<span class="eps' + (front ? " front" : "") + (bad ? " violation" : "") +
      '" title="' + esc(pointTitle(q)) + '">' + esc(fmtEps(q.epsilon)) +
      (front ? "\u2605" : "") + (bad ? "\u26a0" : "") + "</span>";
  }
  function epsCell(e) {  // the ε values; opened, each with its means
    var pts = arr(e.points).filter(isObj);
    if (!pts.length) { return '<td class="pts">\u2014</td>'; }
    var lines = pts.map(function (q) {
      return '<div class="pv">' + epsMark(q) + ' <span class="vals">' + esc(pointValues(q)) +
        "</span></div>";
    });
    return '<td class="pts"><details class="pts"><summary>' + pts.map(epsMark).join(" ") +
      "</summary>" + lines.join("") + "</details></td>";
  }
  function provText(p) {
    if (!isObj(p)) { return String(p); }
    var s = sourceById.get(String(p.source));
    var bits = [String(p.source) + (s && s.location !== undefined ? " (" + s.location + ")" : "")];
    if (p.suite_version) { bits.push("suite " + p.suite_version); }
    bits.push("commit " + (p.commit === null || p.commit === undefined ? "\u2014" : p.commit));
    bits.push("machine " + (p.machine === null || p.machine === undefined ? "\u2014" : p.machine));
    bits.push("date " + (p.date === null || p.date === undefined ? "\u2014" : p.date));
    if (p.numeric) { bits.push("platform " + p.numeric); }
    bits.push(isObj(p.signer) ? "signed by " + signerText(p.signer) : "unsigned");
    if (p.sealed === false) { bits.push("unsealed (no manifest)"); }
    return bits.join(", ");
  }
  function cellsCell(e) {
    var cs = cellsOf(e);
    if (!cs.length) { return '<td class="num">0</td>'; }
    var items = cs.map(function (qc) {
      var q = qc[0], c = qc[1];
      var links = [link(c.href, "files"), link(c.mlflow, "MLflow")].filter(Boolean)
        .join(" \u00b7 ");
      var prov = arr(c.provenance).map(provText).join("; ");
      return "<li><code>" + esc(c.hash) + "</code> \u03b5=" + esc(fmtEps(q.epsilon)) +
        (c.seed !== null && c.seed !== undefined ? " seed " + esc(c.seed) : "") +
        (links ? ": " + links : ": no links") +
        (prov ? '<br><span class="prov">' + esc(prov) + "</span>" : "") + "</li>";
    });
    return "<td><details><summary>cells (" + cs.length + ")</summary><ul>" + items.join("") +
      "</ul></details></td>";
  }
  var MULTI = BOARDS.length > 1;
  function configCell(e, i) {  // the name, its known-answer mark, its board (when sorted)
    var k = known(e.mechanism);
    return '<td class="cfg" title="' + esc((txt(e.model) === null ? "" : e.model + " \u00b7 ") +
      configText(e)) + '"><span class="name">' + esc(NAME[i]) + "</span>" +
      (k ? endBadge(k) : "") + (MULTI ? '<span class="bd">' + esc(BTEXT[i]) + "</span>" : "") +
      arr(e.plugins).map(function (p) {  // computed by a plugin package: say which, visibly
        return '<span class="plugin">plugin: ' + esc(p) + "</span>";
      }).join("") + "</td>";
  }
  var ROWHTML = new Array(N);
  function rowHtml(i) {
    if (ROWHTML[i] === undefined) {
      var e = ENTRIES[i], k = known(e.mechanism);
      ROWHTML[i] = '<tr data-i="' + i + '" data-id="' + esc(e.id) + '"' +
        (k ? ' class="known end-' + esc(k.end) + '"' : "") + ">" + rankCell(e) +
        configCell(e, i) + '<td class="model">' + esc(txt(e.model) === null ? "\u2014" : e.model) +
        "</td>" +
        scoreCell(e) + epsCell(e) +
        '<td class="wrap">' + esc(txt(e.guarantee) === null ? "\u2014" : e.guarantee) + "</td>" +
        auditCell(e) + '<td class="wrap">' + esc(signedText(e)) + "</td>" + cellsCell(e) +
        "</tr>";
    }
    return ROWHTML[i];
  }
  // Without a sort, the rows are grouped by board: a heading row (the board in words, what its
  // configurations share, its settings behind a toggle), then its known-answer baselines.
  function settingsList(s) {
    if (!isObj(s)) { return ""; }
    var items = Object.keys(s).map(function (k) {
      var v = s[k];
      return "<li><code>" + esc(k) + "</code> " + esc(typeof v === "string" ? v
        : JSON.stringify(v)) + "</li>";
    });
    return items.length ? '<details class="settings"><summary>settings</summary><ul>' +
      items.join("") + "</ul></details>" : "";
  }
  // What the board can tell apart (leaderboard.json boards[].power).
  function powerText(p) {
    if (!isObj(p) || num(p.min_detectable_difference) === null) { return ""; }
    return ' <span class="power" title="two entries get different ranks only when their ' +
      'intervals do not overlap: with this board&#39;s median half-width h, differences ' +
      'below about 2h are not ranked">ranks score differences above ~' +
      esc(f3(p.min_detectable_difference)) + "; " + esc(String(p.n_rank1)) + " of " +
      esc(String(p.n_ranked)) + " ranked at 1</span>";
  }
  var GROUPHTML = new Map();
  function groupHtml(bk) {
    if (!GROUPHTML.has(bk)) {
      var b = bk >= 0 ? BOARDS[bk] : null;
      var common = b ? COMMON.get(String(b.id)) : "";
      GROUPHTML.set(bk, '<tr class="group"><th colspan="' + COLS.length + '" scope="colgroup">' +
        '<span class="btitle">' + esc(b ? boardText(b) : "entries without a board") +
        "</span>" + (common ? ' <span class="common">every configuration: ' + esc(common) +
        "</span>" : "") + (b ? powerText(b.power) : "") + (b ? settingsList(b.settings) : "") +
        "</th></tr>");
    }
    return GROUPHTML.get(bk);
  }
  function baselineRows(bk) {  // the board's unprivatized baselines, as rows of known answers
    if (bk < 0) { return ""; }
    var k = known("none") || {end: "privacy", label: "unprivatized baseline", text: ""};
    var model = state.filters.model;
    return arr(BOARDS[bk].baselines).filter(isObj).filter(function (base) {
      return !model || txt(base.model) === model;
    }).map(function (base) {
      var cells = arr(base.cells);
      return '<tr class="baseline known end-' + esc(k.end) + '"><td class="num rank" ' +
        'title="not ranked: the reference the scores are measured from">\u25c6</td>' +
        '<td class="cfg"><span class="name">' + esc(k.label) + "</span>" + endBadge(k) +
        '</td><td class="model">' + esc(txt(base.model) === null ? "\u2014" : base.model) +
        "</td>" +
        '<td class="num">\u2014</td><td class="pts"><span class="vals base">' +
        esc(pointValues(base)) + "</span></td><td>none (not privatized)</td><td></td><td></td>" +
        (cells.length ? "<td><details><summary>cells (" + cells.length + ")</summary><ul>" +
          cells.map(function (h) { return "<li><code>" + esc(h) + "</code></li>"; }).join("") +
          "</ul></details></td>" : '<td class="num">0</td>') + "</tr>";
    }).join("");
  }

  // ------------------------------------------------------------------ filters
  var FILTERS = [
    {id: "board", label: "Board", get: function (e) { return txt(e.board); }},
    {id: "dataset", label: "Dataset", get: function (e) { return txt(e.dataset); }},
    {id: "model", label: "Model", get: function (e) { return txt(e.model); }},
    {id: "mechanism", label: "Mechanism", get: function (e) { return txt(e.mechanism); }},
    {id: "sensitivity", label: "Sensitivity", get: function (e) { return txt(e.sensitivity); }},
    {id: "mapping", label: "Mapping", get: function (e) { return txt(e.mapping); }},
    {id: "suite_version", label: "Suite version",
     get: function (e) { return txt(e.suite_version); }},
    {id: "audit", label: "Audit", get: function (e) { return txt(e.audit); }},
    {id: "signed", label: "Signed by", get: signedText}
  ];
  var DSNAME = new Map();  // a dataset's label -> its name in words (its board's title)
  ENTRIES.forEach(function (e) {
    var b = boardById.get(String(e.board));
    if (b && txt(b.dataset_title) && txt(e.dataset) !== null && !DSNAME.has(String(e.dataset))) {
      DSNAME.set(String(e.dataset), String(b.dataset_title));
    }
  });
  var collator = new Intl.Collator(undefined, {numeric: true});
  var state = {filters: {}, sort: null, dir: "ascending", all: false, eps: false,
               plots: PLOT_LIMIT};
  var form = document.getElementById("filters");
  FILTERS.forEach(function (f) {
    f.values = ENTRIES.map(function (e) { return f.get(e); });
    var counts = new Map();
    f.values.forEach(function (v) { if (v !== null) { counts.set(v, (counts.get(v) || 0) + 1); } });
    var vals = Array.from(counts.keys());
    if (f.id === "board") {
      vals.sort(function (a, b) {
        var x = boardIdx.has(a) ? boardIdx.get(a) : 1e9;
        var y = boardIdx.has(b) ? boardIdx.get(b) : 1e9;
        return x - y || collator.compare(a, b);
      });
    } else { vals.sort(collator.compare); }
    var label = document.createElement("label");
    label.appendChild(document.createTextNode(f.label + " "));
    var sel = document.createElement("select");
    sel.name = f.id; sel.id = "filter-" + f.id;
    sel.appendChild(new Option("all (" + ENTRIES.length + ")", ""));
    vals.forEach(function (v) {
      var b = f.id === "board" ? boardById.get(v) : null;
      var shown = b ? boardText(b) : f.id === "dataset" && DSNAME.has(v) ? DSNAME.get(v) : v;
      sel.appendChild(new Option(shown + " (" + counts.get(v) + ")", v));
    });
    f.select = sel; f.known = new Set(vals);
    label.appendChild(sel); form.appendChild(label);
  });

  // ------------------------------------------------------------------ state
  var q = new URLSearchParams(window.location.search);
  FILTERS.forEach(function (f) {
    var v = q.get(f.id);
    if (v !== null && v !== "" && f.known.has(v)) { state.filters[f.id] = v; f.select.value = v; }
  });
  if (q.get("sort") && COL.has(q.get("sort"))) {
    state.sort = q.get("sort");
    state.dir = q.get("dir") === "desc" ? "descending" : "ascending";
  }
  state.all = q.get("all") === "1";
  state.eps = q.get("eps") === "1";
  function writeQuery() {
    var p = new URLSearchParams();
    FILTERS.forEach(function (f) {
      if (state.filters[f.id]) { p.set(f.id, state.filters[f.id]); }
    });
    if (state.sort) {
      p.set("sort", state.sort);
      if (state.dir === "descending") { p.set("dir", "desc"); }
    }
    if (state.all) { p.set("all", "1"); }
    if (state.eps) { p.set("eps", "1"); }
    var s = p.toString();
    try {
      history.replaceState(null, "", s ? "?" + s : window.location.pathname);
    } catch (err) { /* some file: URLs refuse it; the page works the same */ }
  }

  // ------------------------------------------------------------------ table
  var table = document.getElementById("board");
  var thead = table.tHead, tbody = table.tBodies[0];
  var hr = document.createElement("tr");
  COLS.forEach(function (c) {
    var th = document.createElement("th");
    th.setAttribute("data-col", c.id); th.setAttribute("scope", "col");
    th.setAttribute("tabindex", "0");
    th.textContent = c.label; hr.appendChild(th);
  });
  thead.appendChild(hr);
  var moreBtn = document.getElementById("show-all");
  var countP = document.getElementById("count");
  var visible = [];  // entry indices passing the filters, in default order
  var shown = [];    // visible, sorted
  var byDefault = ENTRIES.map(function (e, i) { return i; })
    .sort(function (a, b) { return ORD[a] - ORD[b]; });
  function applyFilters() {
    var act = FILTERS.filter(function (f) { return state.filters[f.id]; });
    visible = byDefault.filter(function (i) {
      for (var k = 0; k < act.length; k++) {
        if (act[k].values[i] !== state.filters[act[k].id]) { return false; }
      }
      return true;
    });
  }
  function applySort() {
    shown = visible.slice();
    if (!state.sort) { return; }
    var keys = keysOf(state.sort), sign = state.dir === "descending" ? -1 : 1;
    shown.sort(function (a, b) {
      var x = keys[a], y = keys[b], c = 0;
      if (x === null && y !== null) { return 1; }
      if (y === null && x !== null) { return -1; }
      if (x !== null && y !== null) {
        c = typeof x === "number" && typeof y === "number" ? x - y
          : collator.compare(String(x), String(y));
      }
      return c === 0 ? ORD[a] - ORD[b] : sign * c;
    });
  }
  function renderTable() {
    var n = state.all ? shown.length : Math.min(shown.length, ROW_LIMIT);
    var parts = [], last = null;
    for (var k = 0; k < n; k++) {
      var bk = BIDX[shown[k]];
      if (!state.sort && bk !== last) { parts.push(groupHtml(bk), baselineRows(bk)); last = bk; }
      parts.push(rowHtml(shown[k]));
    }
    tbody.innerHTML = parts.join("");
    table.classList.toggle("grouped", !state.sort);
    if (state.eps) { openEps(true); }
    Array.prototype.forEach.call(hr.cells, function (th) {
      if (th.getAttribute("data-col") === state.sort) { th.setAttribute("aria-sort", state.dir); }
      else { th.removeAttribute("aria-sort"); }
    });
    table.setAttribute("data-sorted", state.sort ? state.sort + ":" + state.dir : "");
    table.setAttribute("data-rows", String(shown.length));
    table.setAttribute("data-shown", String(n));
    countP.textContent = shown.length + " of " + N + " entries match the filters" +
      (n < shown.length ? "; the first " + n + " are shown." : ".");
    moreBtn.hidden = n >= shown.length;
    moreBtn.textContent = "Show all " + shown.length + " rows";
  }
  function onHeader(ev) {
    var th = ev.target.closest("th");
    if (!th || (ev.type === "keydown" && ev.key !== "Enter" && ev.key !== " ")) { return; }
    ev.preventDefault();
    var id = th.getAttribute("data-col");
    if (state.sort === id && state.dir === "descending") {  // a third click: back to boards
      state.sort = null; state.dir = "ascending";
    } else {
      state.dir = state.sort === id && state.dir === "ascending" ? "descending" : "ascending";
      state.sort = id;
    }
    applySort(); renderTable(); writeQuery();
  }
  thead.addEventListener("click", onHeader);
  thead.addEventListener("keydown", onHeader);
  moreBtn.addEventListener("click", function () { state.all = true; renderTable(); writeQuery(); });
  function openEps(open) {  // open (or close) every ε list of the table
    Array.prototype.forEach.call(tbody.querySelectorAll("details.pts"), function (d) {
      d.open = open;
    });
  }
  var epsBox = document.getElementById("open-eps");
  epsBox.checked = state.eps;
  epsBox.addEventListener("change", function () {
    state.eps = epsBox.checked; openEps(state.eps); writeQuery();
  });
  form.addEventListener("change", function (ev) {
    var f = FILTERS.find(function (x) { return x.select === ev.target; });
    if (!f) { return; }
    if (ev.target.value) { state.filters[f.id] = ev.target.value; }
    else { delete state.filters[f.id]; }
    state.plots = PLOT_LIMIT;
    applyFilters(); applySort(); renderTable(); renderPlots(); writeQuery();
  });

  // ------------------------------------------------------------------ plots
  var PAL = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
             "#e377c2", "#7f7f7f", "#bcbd22"];
  var W = 420, H = 320, ML = 44, MR = 12, MT = 10, MB = 36;
  function sx(v) { return (ML + Math.min(1, Math.max(0, v)) * (W - ML - MR)).toFixed(1); }
  function sy(v) { return (H - MB - Math.min(1, Math.max(0, v)) * (H - MT - MB)).toFixed(1); }
  function plottable(q) {
    return isObj(q) && q.privacy_valid !== false && num(q.privacy) !== null &&
      num(q.utility) !== null;
  }
  function svgEl(name, attrs, inner) {  // attribute values escaped; inner is markup
    var s = "<" + name;
    Object.keys(attrs).forEach(function (k) { s += " " + k + '="' + esc(attrs[k]) + '"'; });
    return s + ">" + (inner || "") + "</" + name + ">";
  }
  function line(cls, x1, x2, y1, y2) {
    return svgEl("line", {"class": cls, x1: x1, x2: x2, y1: y1, y2: y2});
  }
  function axes() {
    var s = "";
    [0, 0.25, 0.5, 0.75, 1].forEach(function (t) {
      s += line("grid", sx(t), sx(t), sy(0), sy(1)) + line("grid", sx(0), sx(1), sy(t), sy(t)) +
        svgEl("text", {x: sx(t), y: H - MB + 13, "text-anchor": "middle"}, String(t)) +
        svgEl("text", {x: ML - 5, y: +sy(t) + 3, "text-anchor": "end"}, String(t));
    });
    return s + line("ax", sx(0), sx(1), sy(0), sy(0)) + line("ax", sx(0), sx(0), sy(0), sy(1)) +
      svgEl("text", {x: sx(0.5), y: H - 4, "text-anchor": "middle"}, "empirical privacy \u2192") +
      svgEl("text", {transform: "translate(11," + sy(0.5) + ") rotate(-90)",
                     "text-anchor": "middle"}, "utility \u2192");
  }
  var AXES = axes();
  var DASHES = ["", "6 3", "2 2"];  // after 10 colours, the lines are dashed, then dotted
  function epsRange(ps) {
    var a = fmtEps(ps[0][0].epsilon), z = fmtEps(ps[ps.length - 1][0].epsilon);
    return "\u03b5 " + (a === z ? a : a + " \u2192 " + z);
  }
  function swatch(color, dash) {  // a legend's line-and-dot sample (CSS only: no SVG shapes)
    return '<span class="sw' + (dash ? " sw-" + (dash === DASHES[1] ? "dashed" : "dotted") : "") +
      '" style="border-top-color:' + color + '"><span class="dot" style="background:' + color +
      '"></span></span>';
  }
  function plotHtml(bk, idx) {
    var b = bk >= 0 ? BOARDS[bk] : null;
    var lines = "", pts = "", npts = 0, skipped = 0, legend = [], drawn = 0, pareto = false;
    idx.forEach(function (i) {
      var e = ENTRIES[i];
      var ps = arr(e.points).map(function (q, k) { return [q, k]; }).filter(function (qk) {
        if (plottable(qk[0])) { return true; }
        skipped++; return false;
      });
      if (!ps.length) { return; }
      var color = PAL[drawn % PAL.length], dash = DASHES[Math.floor(drawn / PAL.length) % 3];
      drawn++;
      ps.sort(function (a, c) { return epsVal(a[0].epsilon) - epsVal(c[0].epsilon); });
      if (ps.length > 1) {
        var at = {"class": "ln", stroke: color, points: ps.map(function (qk) {
          return sx(qk[0].privacy) + "," + sy(qk[0].utility); }).join(" ")};
        if (dash) { at["stroke-dasharray"] = dash; }
        lines += svgEl("polyline", at);
      }
      ps.forEach(function (qk) {
        var front = qk[0].pareto === true;
        pareto = pareto || front;
        pts += svgEl("circle", {"class": front ? "pt pareto" : "pt", "data-i": i, "data-k": qk[1],
                                cx: sx(qk[0].privacy), cy: sy(qk[0].utility),
                                r: front ? 4.5 : 3.5, fill: color});
        npts++;
      });
      var k = known(e.mechanism);
      legend.push('<li data-i="' + i + '">' + swatch(color, dash) + esc(NAME[i] +
        (MODELS.get(bk) > 1 && txt(e.model) !== null ? " \u00b7 " + e.model : "") + " (" +
        epsRange(ps) + ")") + (k ? endBadge(k) : "") + "</li>");
    });
    var bases = "", nbase = 0;
    if (b) {
      var kb = known("none") || {label: "unprivatized baseline"};
      arr(b.baselines).forEach(function (base, k) {
        if (!plottable(base)) { return; }
        var x = +sx(base.privacy), y = +sy(base.utility);
        bases += svgEl("rect", {"class": "base", "data-b": bk, "data-k": k, x: x - 4, y: y - 4,
                                width: 8, height: 8, transform: "rotate(45 " + x + " " + y + ")"});
        nbase++;
        legend.push('<li class="key"><span class="sw-base"></span>' + esc(kb.label + " (" +
          base.model + ")") + "</li>");
      });
    }
    if (pareto) {
      legend.push('<li class="key"><span class="sw-pareto"></span>ringed: on the Pareto front' +
        "</li>");
    }
    var title = b ? boardText(b) : "entries without a board";
    var svg = svgEl("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H,
                            "data-points": npts, role: "img",
                            "aria-label": "privacy-utility scatter: " + title},
                    AXES + lines + pts + bases);
    var what = "x: empirical privacy, y: utility (macro-F1), both 0 to 1, higher is better. " +
      "Each configuration is one colour; its points are its \u03b5 values, joined from the " +
      "smallest \u03b5 to the largest. " + npts + " point" + (npts === 1 ? "" : "s") + " of " +
      drawn + " configuration" + (drawn === 1 ? "" : "s") +
      (nbase ? "; \u25c6 the unprivatized baseline" + (nbase > 1 ? "s" : "") : "") +
      (skipped ? "; " + skipped + " without a valid privacy measurement not plotted" : "") + ".";
    return '<figure class="plot" data-board="' + esc(b ? b.id : "") + '"><figcaption>' +
      '<span class="ptitle">' + esc(title) + '</span> <span class="what">' + esc(what) +
      "</span></figcaption>" + svg + '<ul class="legend" data-count="' + legend.length + '">' +
      legend.join("") + "</ul></figure>";
  }
  var MODELS = new Map();  // board index -> number of models on it
  (function () {
    var seen = new Map();
    ENTRIES.forEach(function (e, i) {
      if (!seen.has(BIDX[i])) { seen.set(BIDX[i], new Set()); }
      seen.get(BIDX[i]).add(txt(e.model));
    });
    seen.forEach(function (s, k) { MODELS.set(k, s.size); });
  })();
  var plots = document.getElementById("plots"), plotNote = document.getElementById("plot-note");
  var plotMore = document.getElementById("more-plots");
  function renderPlots() {
    var groups = new Map();
    visible.forEach(function (i) {
      var k = BIDX[i];
      if (!groups.has(k)) { groups.set(k, []); }
      groups.get(k).push(i);
    });
    // a board without a private attribute (membership inference only) has no privacy axis
    var keys = Array.from(groups.keys()).filter(function (k) {
      return k < 0 || txt(BOARDS[k].private_attribute);
    }).sort(function (a, b) { return (a < 0) - (b < 0) || a - b; });
    var unplotted = groups.size - keys.length;
    var take = keys.slice(0, state.plots);
    plots.innerHTML = take.map(function (k) { return plotHtml(k, groups.get(k)); }).join("");
    plots.setAttribute("data-plots", String(take.length));
    plotNote.textContent = (groups.size === 0 ? "No entry matches the filters." :
      "Plots of " + take.length + " of the " + keys.length + " boards with matching entries" +
      (take.length < keys.length ? " (choose a board in the Board filter, or draw more)." : ".")) +
      (unplotted ? " " + unplotted + " board(s) without a private attribute: no privacy axis, " +
       "not plotted." : "");
    plotMore.hidden = take.length >= keys.length;
    renderBaselines(Array.from(groups.keys()).filter(function (k) { return k >= 0; }).sort(
      function (a, b) { return a - b; }));
  }
  var baseList = document.getElementById("baselines");
  function renderBaselines(keys) {  // the unprivatized baselines of the boards shown
    var items = [];
    keys.forEach(function (k) {
      arr(BOARDS[k].baselines).filter(isObj).forEach(function (base) {
        items.push("<li>" + esc(boardText(BOARDS[k]) + " \u2014 " + base.model + ": " +
                                pointValues(base)) + "</li>");
      });
    });
    baseList.innerHTML = items.length ? items.join("") : "<li>none</li>";
    baseList.setAttribute("data-count", String(items.length));
  }
  plotMore.addEventListener("click", function () { state.plots += PLOT_LIMIT; renderPlots(); });
  var tip = document.getElementById("tip");
  function tipLines(t) {
    var k = +t.getAttribute("data-k");
    if (t.classList.contains("base")) {
      var b = BOARDS[+t.getAttribute("data-b")], base = arr(b.baselines)[k];
      return ["unprivatized baseline: " + base.model, boardText(b),
              "utility " + withCi(base.utility, base.utility_ci),
              "privacy " + withCi(base.privacy, base.privacy_ci) +
              (base.adversary ? " (adversary " + base.adversary + ")" : ""),
              miaText(base.mia) || "no MIA"];
    }
    var e = ENTRIES[+t.getAttribute("data-i")], q = arr(e.points)[k];
    return [e.model + " \u00b7 " + configText(e), BTEXT[+t.getAttribute("data-i")],
            "\u03b5 = " + fmtEps(q.epsilon),
            "utility " + withCi(q.utility, q.utility_ci),
            "privacy " + withCi(q.privacy, q.privacy_ci) +
              (q.privacy_valid === true ? "" : " (validity unknown)"),
            "adversary " + (txt(q.adversary) === null ? "\u2014" : q.adversary),
            miaText(q.mia) || "no MIA",
            measuresText(q.measures) || "no measures",
            "audit " + (txt(q.audit) === null ? "\u2014" : q.audit),
            q.pareto === true ? "on the Pareto front \u2605" : "not on the Pareto front",
            "score " + withCi(e.score, e.score_ci) + ", rank " +
              (num(e.rank) === null ? "\u2014" : e.rank) +
              (e.rank_flag ? " (" + e.rank_flag + ")" : "")];
  }
  plots.addEventListener("mouseover", function (ev) {
    var t = ev.target;
    if (!t.classList || !(t.classList.contains("pt") || t.classList.contains("base"))) { return; }
    tip.textContent = tipLines(t).join("\n");
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 300) + "px";
    tip.style.top = (ev.clientY + 12) + "px";
  });
  plots.addEventListener("mouseout", function (ev) {
    var t = ev.target;
    if (t.classList && (t.classList.contains("pt") || t.classList.contains("base"))) {
      tip.hidden = true;
    }
  });

  // ------------------------------------------------------------------ first render
  applyFilters(); applySort();
  var T_T = performance.now(); renderTable(); T_T = performance.now() - T_T;
  var T_P = performance.now(); renderPlots(); T_P = performance.now() - T_P;
  body.setAttribute("data-parse-ms", (T_PARSE - T0).toFixed(1));
  body.setAttribute("data-table-ms", T_T.toFixed(1));
  body.setAttribute("data-plot-ms", T_P.toFixed(1));
  body.setAttribute("data-rendered-ms", performance.now().toFixed(1));
  window.benchLeaderboard = {state: state, entries: ENTRIES};
})();
