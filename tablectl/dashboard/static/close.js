// tablectl dashboard: the night's close from the parlor's ledger, per player and per
// table, with its CSV (docs/seating.md). Loaded after app.js; staff only.
"use strict";

const CLOSE_I18N = {
  en: {
    title: "Night's close", day: "Business day", show: "Show", csv: "Download CSV",
    player: "Player", table: "Table", games: "Games", places: "1st/2nd/3rd/4th",
    score: "Score", result: "Result", chips: "Chips", fees: "Fees", p: "P",
    none: "No finished game on this business day.", failed: "Cannot show the close: {0}",
    range: "{0} to {1}",
  },
  ja: {
    title: "本日の締め", day: "営業日", show: "表示", csv: "CSV をダウンロード",
    player: "プレイヤー", table: "卓", games: "対局数", places: "1着/2着/3着/4着",
    score: "点数", result: "成績", chips: "チップ", fees: "ゲーム代", p: "P",
    none: "この営業日に終了した対局はありません。", failed: "締めを表示できません: {0}",
    range: "{0} から {1}",
  },
};

function closeText(key, ...args) {
  const text = (CLOSE_I18N[lang] || CLOSE_I18N.en)[key] || CLOSE_I18N.en[key] || key;
  return String(text).replace(/\{(\d)\}/g, (_, i) => String(args[Number(i)]));
}

// null: not asked yet; false: no ledger here (404) or not staff; otherwise the close shown.
let closeShown = null;
const closeDrawn = { lang: null, staff: null, night: null };

function cell(value) {
  return value === null || value === undefined ? "" : points(value);
}

function closeTable(head, rows) {
  return el("table", { class: "close" },
    el("thead", {}, el("tr", {}, head.map((h, i) => el("th", { class: i ? "num" : null }, closeText(h))))),
    el("tbody", {}, rows.map((row) => el("tr", {}, row.map((v, i) =>
      el("td", { class: i ? "num" : null }, v))))));
}

function renderClose() {
  let section = $("close-section");
  if (!section) {
    section = el("section", { id: "close-section", hidden: true });
    $("games-section").after(section);
  }
  if (!me.staff) {
    section.hidden = true;
    closeDrawn.staff = false;
    return;
  }
  if (closeShown === null) {
    closeShown = false;
    loadClose("");
  }
  section.hidden = closeShown === false;
  if (section.hidden || (closeDrawn.lang === lang && closeDrawn.night === closeShown
      && closeDrawn.staff)) return;
  Object.assign(closeDrawn, { lang, night: closeShown, staff: true });
  const night = closeShown;
  const players = night.players.map((p) => [p.player, p.games, p.places.join("/"),
    points(p.score), p.result === null ? "" : signedResult(p.result), cell(p.chips),
    cell(p.fees), cell(p.p)]);
  const tables = night.tables.map((t) => [t.table, t.games, cell(t.fees)]);
  section.replaceChildren(
    el("h2", {}, closeText("title")),
    el("form", { id: "close-form", onsubmit: (e) => { e.preventDefault(); loadClose($("close-day").value); } },
      el("label", {}, el("span", {}, closeText("day")),
        el("input", { id: "close-day", type: "date", value: night.day, required: true })),
      el("button", { type: "submit", id: "close-show" }, closeText("show")),
      el("a", { id: "close-csv", class: "button", href: `/api/close.csv?day=${encodeURIComponent(night.day)}`,
        download: `close-${night.day}.csv` }, closeText("csv"))),
    el("p", { class: "quiet" }, closeText("range", night.from.replace("T", " "), night.to.replace("T", " "))),
    el("p", { id: "close-error", class: "error", hidden: true }),
    ...(players.length
      ? [el("div", { class: "scroll" }, closeTable(
        ["player", "games", "places", "score", "result", "chips", "fees", "p"], players)),
      el("div", { class: "scroll" }, closeTable(["table", "games", "fees"], tables))]
      : [el("p", { class: "quiet" }, closeText("none"))]));
}

async function loadClose(day) {
  try {
    const query = day ? `?day=${encodeURIComponent(day)}` : "";
    const response = await fetch(`/api/close${query}`, { credentials: "same-origin" });
    if (response.status === 404 || response.status === 401) {
      closeShown = false; // no ledger configured here, or not staff (any more)
    } else if (!response.ok) {
      const why = await response.text();
      if ($("close-error")) {
        $("close-error").textContent = closeText("failed", why);
        $("close-error").hidden = false;
      }
      return;
    } else {
      closeShown = await response.json();
    }
  } catch (error) {
    return;
  }
  schedule();
}

renderHooks.push(renderClose);
