// tablectl dashboard: the page's logic. No framework, no build step, nothing from a CDN.
// Everything the server sends is shown through textContent, never parsed as HTML.
"use strict";

const I18N = {
  en: {
    title: "Tables", alerts: "Alerts", tables: "Tables", games: "Finished games",
    no_alerts: "No alerts.", no_tables: "No table has reported yet.",
    no_games: "No finished game yet.", login: "Log in", logout: "Log out",
    cancel: "Cancel", close: "Close", user: "Your name", password: "Staff password",
    connecting: "connecting", live: "live", broker_down: "broker unreachable",
    acknowledge: "Acknowledge", acked_by: "acknowledged by {0}", login_to_ack: "log in to acknowledge",
    offline: "OFFLINE", link_down: "LINK DOWN", seat: "seat",
    ago_s: "{0}s ago", ago_min: "{0}min ago", ago_h: "{0}h{1}m ago", hands_of: "Hands of {0}",
    honba: "{0} honba", deposits: "deposits {0}", tiles: "{0} tiles left", clock: "clock {0}",
    last_hand: "Last hand", rank: ["1st", "2nd", "3rd", "4th"], dealer: "D", riichi: "Riichi",
    no_hands: "No hand settled yet in this game.", hand: "#", round: "Round", kind: "Result",
    winners: "Winners", scores: "Scores", time: "Finished", table: "Table", rules: "Rules",
    hands: "Hands", result: "Result", reason: "Reason", finished: "game over",
    money: "{0} P", chips: "{0} chips",
    winds: { E: "East", S: "South", W: "West", N: "North" },
    round_name: "{0} {1}",
    kinds: {
      staff_call: "Staff call", fault: "Fault", tray_mismatch: "Tray mismatch",
      link_down: "Table link down", last_game: "Last game", offline: "Daemon offline",
      stalled: "Stalled",
    },
    stalled_since: "stalled since {0}", fault_history: "Faults and stalls",
    fault_notes: { fault: "Fault", fault_repeats: "Repeated", fault_cleared: "Cleared",
      stalled: "Stalled", stall_over: "Moving again" },
    results: {
      ron: "Ron", tsumo: "Tsumo", draw: "Draw", abort: "Abortive draw", chombo: "Chombo",
      false_call: "False call",
    },
    phases: {
      offline: "offline", connecting: "connecting", fault: "FAULT", idle: "idle",
      shuffling: "shuffling", walls_up: "walls up", dice: "dice", dealing: "dealing",
      play: "playing", claim: "claim", result_entry: "entering result",
      settlement: "settlement", game_over: "game over",
    },
    reasons: { last_round: "last round", bust: "bust", time_up: "time up", abandoned: "abandoned" },
    login_failed: "Log-in failed: {0}", ack_failed: "Not acknowledged: {0}",
    undo: "Undo last hand", new_game: "New game", rules_label: "Rules", same_rules: "same rules",
    abandon: "Abandon game", tray_override: "Override trays", chombo: "Chombo",
    false_call: "False call", seat_label: "Seat",
    confirm_undo: "Take back the last hand on {0} for entry again?",
    confirm_new_game: "End the game on {0} (kept as abandoned) and start a new one ({1})?",
    confirm_abandon: "Abandon the game on {0} and start a new one under the same rules?",
    confirm_tray_override: "Let play go on at {0} although the trays differ from the scores?",
    confirm_chombo: "Chombo for {1} on {0}? The hand ends.",
    confirm_false_call: "False call penalty for {1} on {0}?",
    cmd_sent: "Sent to {0}; waiting for the table.", cmd_failed: "Not sent: {0}",
    answer_refused: "{0} refused {1}: {2}", answer_done: "{0}: {1} done ({2})",
    actions: { undo: "undo", new_game: "new game", correction: "undo",
      alert_ack: "acknowledgement", unknown: "a request", abandon: "abandon",
      tray_override: "tray override", chombo: "chombo", false_call: "false call" },
    han_fu: "{0} han {1} fu", han: "{0} han", yakuman: "yakuman", yakuman_n: "yakuman x{0}",
    call_words: { staff_call: "{0}: staff call", last_game: "{0}: last game" },
    seat_player: "{0} ({1})", trays_differ: "Trays differ: {0}",
    tray_seat: "{0} tray {1}, score {2}", link_down_words: "no link to the table",
    stalled_words: "no progress for {1} s ({0})",
    ledger_read: "The ledger's database cannot be read since {0}: {1}. Finished games and the close may be out of date.",
    ledger_offline: "The ledger is offline since {0}: the tables keep their finished games until it is back.",
    ledger_db_down: "The ledger cannot use its database since {0}: the tables keep their finished games until it is back.",
  },
  ja: {
    title: "卓一覧", alerts: "アラート", tables: "卓", games: "終了した対局",
    no_alerts: "アラートはありません。", no_tables: "まだどの卓からも報告がありません。",
    no_games: "終了した対局はまだありません。", login: "ログイン", logout: "ログアウト",
    cancel: "キャンセル", close: "閉じる", user: "名前", password: "スタッフパスワード",
    connecting: "接続中", live: "ライブ", broker_down: "ブローカー不通",
    acknowledge: "確認", acked_by: "{0} が確認済み", login_to_ack: "確認にはログインが必要",
    offline: "オフライン", link_down: "通信断", seat: "席",
    ago_s: "{0}秒前", ago_min: "{0}分前", ago_h: "{0}時間{1}分前", hands_of: "{0} の局一覧",
    honba: "{0}本場", deposits: "供託 {0}", tiles: "残り{0}枚", clock: "経過 {0}",
    last_hand: "前局", rank: ["1位", "2位", "3位", "4位"], dealer: "親", riichi: "立直",
    no_hands: "この対局で精算済みの局はまだありません。", hand: "#", round: "局", kind: "結果",
    winners: "和了", scores: "点数", time: "終了", table: "卓", rules: "ルール",
    hands: "局数", result: "結果", reason: "終了理由", finished: "終局",
    money: "{0}P", chips: "祝儀 {0}",
    winds: { E: "東", S: "南", W: "西", N: "北" },
    round_name: "{0}{1}局",
    kinds: {
      staff_call: "スタッフ呼び出し", fault: "故障", tray_mismatch: "点棒トレイ不一致",
      link_down: "卓の通信断", last_game: "ラスト半荘", offline: "デーモン停止",
      stalled: "進行停止",
    },
    stalled_since: "{0} から進行停止", fault_history: "故障と停止の履歴",
    fault_notes: { fault: "故障", fault_repeats: "重複", fault_cleared: "解除", stalled: "進行停止",
      stall_over: "再開" },
    results: {
      ron: "ロン", tsumo: "ツモ", draw: "流局", abort: "途中流局", chombo: "チョンボ",
      false_call: "誤ロン",
    },
    phases: {
      offline: "オフライン", connecting: "接続中", fault: "故障", idle: "待機",
      shuffling: "洗牌中", walls_up: "山積み完了", dice: "サイコロ", dealing: "配牌",
      play: "対局中", claim: "鳴き", result_entry: "結果入力", settlement: "精算",
      game_over: "終局",
    },
    reasons: { last_round: "規定局数", bust: "飛び", time_up: "時間切れ", abandoned: "中止" },
    login_failed: "ログイン失敗: {0}", ack_failed: "確認できません: {0}",
    undo: "前局を訂正", new_game: "新しい対局", rules_label: "ルール", same_rules: "同じルール",
    abandon: "対局を中止", tray_override: "点棒トレイを無視", chombo: "チョンボ",
    false_call: "誤ロン", seat_label: "席",
    confirm_undo: "{0} の前局を取り消して入力し直しますか?",
    confirm_new_game: "{0} の対局を中止して新しい対局 ({1}) を始めますか?",
    confirm_abandon: "{0} の対局を中止して同じルールで新しい対局を始めますか?",
    confirm_tray_override: "{0} の点棒トレイが点数と合いませんが、対局を続けますか?",
    confirm_chombo: "{0} の {1} にチョンボを科しますか? この局は終わります。",
    confirm_false_call: "{0} の {1} に誤ロンの罰符を科しますか?",
    cmd_sent: "{0} に送信しました。卓の応答を待っています。", cmd_failed: "送信できません: {0}",
    answer_refused: "{0} が{1}を拒否: {2}", answer_done: "{0}: {1}完了 ({2})",
    actions: { undo: "訂正", new_game: "新しい対局", correction: "訂正",
      alert_ack: "確認", unknown: "要求", abandon: "中止", tray_override: "トレイ無視",
      chombo: "チョンボ", false_call: "誤ロン" },
    han_fu: "{0}翻{1}符", han: "{0}翻", yakuman: "役満", yakuman_n: "{0}倍役満",
    call_words: { staff_call: "{0}: スタッフ呼び出し", last_game: "{0}: ラスト半荘" },
    seat_player: "{0} ({1})", trays_differ: "点棒トレイ不一致: {0}",
    tray_seat: "{0} トレイ {1}、点数 {2}", link_down_words: "卓との通信がありません",
    stalled_words: "{1} 秒間進行なし ({0})",
    ledger_read: "{0} から台帳のデータベースを読めません: {1}。終了した対局と締めは最新でない可能性があります。",
    ledger_offline: "{0} から台帳サービスが停止しています。復旧するまで各卓が終了した対局を保持します。",
    ledger_db_down: "{0} から台帳サービスがデータベースを使えません。復旧するまで各卓が終了した対局を保持します。",
  },
};

// Staff actions on the page, as the table takes them (docs/mqtt.md, staff/command).
const STAFF_BUTTONS = ["undo", "abandon", "tray_override", "chombo", "false_call", "new_game"];
const SEAT_COMMANDS = ["chombo", "false_call"];
// The staff actions whose staff_action event answers the page (besides a correction).
const ANSWERED = ["new_game", "tray_override", "chombo", "false_call"];

const model = { tables: new Map(), games: [], broker: false, stream: false, ledger: null };
let me = { user: null, staff: false, csrf: null, may_view: true, login_needed: true };
let lang = localStorage.getItem("tablectl-lang") || document.documentElement.lang || "en";
if (!(lang in I18N)) lang = "en";
let detail = null;
let source = null;
let pending = false;
// What is on the page, so that a render rebuilds only what changed: a busy parlor sends
// tens of updates a second, most of them about one table.
const drawn = { cards: new Map(), alerts: null, detail: null, games: null };
// What seating.js and close.js draw, after the rest of each render.
const renderHooks = [];

function t(key, ...args) {
  let text = I18N[lang][key];
  if (text === undefined) text = I18N.en[key];
  if (text === undefined) return key;
  return String(text).replace(/\{(\d)\}/g, (_, i) => String(args[Number(i)]));
}

function rankText(place) {
  const names = I18N[lang].rank || I18N.en.rank;
  return names[place - 1] || String(place);
}

function sub(group, key) {
  const own = I18N[lang][group] || {};
  return own[key] || (I18N.en[group] || {})[key] || String(key || "");
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const $ = (id) => document.getElementById(id);
const points = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : "–");
const signed = (n) => (n > 0 ? "+" : "") + points(n);
// One decimal, or two where a shared uma needs them (19.97, not 20.0), as tablectl
// records and the ledger's close write it (tablectl/records.py format_result).
const resultText = (n) => {
  const text = n.toFixed(2);
  return text.endsWith("0") ? text.slice(0, -1) : text;
};
const signedResult = (n) => (typeof n === "number" ? (n > 0 ? "+" : "") + resultText(n) : "–");

function roundText(round) {
  if (!round) return "–";
  return t("round_name", sub("winds", round.wind), round.number);
}

function clockText(seconds) {
  if (typeof seconds !== "number") return null;
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  const mm = String(m).padStart(h ? 2 : 1, "0"), ss = String(r).padStart(2, "0");
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

function agoText(since) {
  if (typeof since !== "number") return "";
  const s = Math.max(0, Date.now() / 1000 - since);
  if (s < 60) return t("ago_s", Math.floor(s));
  if (s < 3600) return t("ago_min", Math.floor(s / 60));
  return t("ago_h", Math.floor(s / 3600), Math.floor((s % 3600) / 60));
}

// A Unix time as the local HH:MM (a stall's "since").
function clockOf(since) {
  if (typeof since !== "number") return "";
  return new Date(since * 1000).toLocaleTimeString(lang === "ja" ? "ja-JP" : "en-GB",
    { hour: "2-digit", minute: "2-digit" });
}

// An alert's label: its kind, and for a stall since when.
function alertLabel(alert) {
  if (alert.kind === "stalled") return t("stalled_since", clockOf(alert.since));
  return sub("kinds", alert.kind);
}

function seatLabel(table, seat) {
  if (seat === null || seat === undefined) return null;
  const info = (table.seats || [])[seat];
  if (!info) return `${t("seat")} ${seat}`;
  const wind = sub("winds", info.wind);
  return info.name ? `${wind} ${info.name}` : wind;
}

// A seat's wind in a settled hand: from that hand's dealer, not the current one.
function handWind(table, hand, seat) {
  const players = (table.seats || []).length || 4;
  if (typeof hand.dealer !== "number") return (table.seats[seat] || {}).wind || "";
  return "ESWN"[(seat - hand.dealer + players) % players];
}

// A seat as it was in a settled hand: its wind then, and its player.
function handSeatLabel(table, hand, seat) {
  const info = (table.seats || [])[seat];
  const wind = sub("winds", handWind(table, hand, seat));
  return info && info.name ? `${wind} ${info.name}` : wind || `${t("seat")} ${seat}`;
}

// A winner's value as the table has it: han and fu (or yakuman), and where the table
// read the tiles, the points and the yaku.
function valueText(value) {
  let text;
  if (value.yakuman) text = value.yakuman > 1 ? t("yakuman_n", value.yakuman) : t("yakuman");
  else if (typeof value.fu === "number") text = t("han_fu", value.han, value.fu);
  else text = t("han", value.han);
  if (typeof value.points === "number") text += ` ${points(value.points)}`;
  if (Array.isArray(value.yaku) && value.yaku.length) text += ` (${value.yaku.join(", ")})`;
  return text;
}

// --- rendering ------------------------------------------------------------------------

function schedule() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => { pending = false; render(); });
}

// Setting the same text still replaces the node's children: leave it when nothing changed.
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

function render() {
  document.documentElement.lang = lang;
  for (const node of document.querySelectorAll("[data-i18n]")) setText(node, t(node.dataset.i18n));
  setText($("lang"), lang === "ja" ? "English" : "日本語");
  $("lang").setAttribute("lang", lang === "ja" ? "en" : "ja");
  renderStatus();
  renderLedger();
  renderAlerts();
  renderTables();
  renderDetail();
  renderGames();
  for (const hook of renderHooks) hook();
}

function renderStatus() {
  const status = $("stream");
  const state = !model.stream ? "down" : model.broker ? "up" : "warn";
  status.className = `status ${state}`;
  setText(status, !model.stream ? t("connecting") : model.broker ? t("live") : t("broker_down"));
  setText($("who"), me.user || "");
  $("login-open").hidden = Boolean(me.user) && (me.staff || !me.login_needed);
  $("logout").hidden = !me.user || !me.login_needed;
}

// The ledger's banner: the service offline or without its database (the tables keep
// their games meanwhile), and the dashboard's own reads of the ledger's database failing.
function renderLedger() {
  const ledger = model.ledger || {};
  const lines = [];
  if (ledger.state === "offline") lines.push(t("ledger_offline", clockOf(ledger.trouble_since)));
  else if (ledger.database === "down") lines.push(t("ledger_db_down", clockOf(ledger.trouble_since)));
  if (ledger.read_error) lines.push(t("ledger_read", clockOf(ledger.read_since), ledger.read_error));
  const banner = $("ledger-banner");
  const shown = JSON.stringify(lines);
  if (banner.dataset.shown === shown) return;
  banner.dataset.shown = shown;
  banner.replaceChildren(...lines.map((line) => el("p", {}, line)));
  banner.hidden = lines.length === 0;
}

// A seat as an alert's params give it (fixed when it was raised): its wind then, and
// its player.
function paramSeat(params) {
  const wind = sub("winds", params.wind);
  return params.player ? t("seat_player", wind, params.player) : wind;
}

// What an alert says, in the page's language where the table sent its params (MQTT
// revision 7); else the table's own words (English), or its short text.
function alertWords(alert) {
  const p = alert.params;
  if (p) {
    const call = (I18N[lang].call_words || I18N.en.call_words)[alert.kind];
    if (call && p.wind) return call.replace("{0}", () => paramSeat(p));
    if (alert.kind === "tray_mismatch" && Array.isArray(p.trays) && p.trays.length) {
      return t("trays_differ", p.trays.map((x) => t("tray_seat", paramSeat(x), points(x.tray),
        points(x.score))).join("; "));
    }
    if (alert.kind === "link_down") return t("link_down_words");
    if (alert.kind === "stalled" && p.phase) {
      return t("stalled_words", sub("phases", p.phase), Math.floor(p.idle_s));
    }
  }
  return alert.words || alert.text;
}

function allAlerts() {
  const out = [];
  for (const table of model.tables.values()) {
    for (const alert of table.alerts || []) out.push({ alert, table });
  }
  out.sort((a, b) => (a.alert.since || 0) - (b.alert.since || 0));
  return out;
}

function renderAlerts() {
  const list = $("alerts");
  const alerts = allAlerts();
  const shown = JSON.stringify([lang, me.staff, alerts.map(({ alert, table }) => [
    table.table, alert, alert.where || seatLabel(table, alert.seat), agoText(alert.since)])]);
  if (shown === drawn.alerts) return;
  drawn.alerts = shown;
  const items = alerts.map(({ alert, table }) => {
    // The table's words or params, fixed when it raised the alert (they name the seat
    // as it was then); from a table before them, the seat as it is now.
    const where = alert.words || alert.params ? null : seatLabel(table, alert.seat);
    const text = alertWords(alert);
    let action;
    if (alert.ack) {
      action = el("span", { class: "acked" }, "✓ ", t("acked_by", alert.ack.by));
    } else if (me.staff) {
      action = el("button", {
        type: "button", class: "ack", "data-table": table.table, "data-alert": alert.id,
        onclick: () => acknowledge(table.table, alert.id),
      }, t("acknowledge"));
    } else {
      action = el("span", { class: "quiet" }, t("login_to_ack"));
    }
    return el("li", {
      class: `alert kind-${alert.kind}${alert.ack ? " is-acked" : ""}`,
      "data-alert": alert.id, "data-table": table.table,
    },
    el("span", { class: "alert-table" }, table.table),
    el("span", { class: "alert-kind" }, alertLabel(alert)),
    where ? el("span", { class: "alert-seat" }, where) : null,
    text ? el("span", { class: "alert-text" }, text) : null,
    el("span", { class: "alert-since" }, agoText(alert.since)),
    el("span", { class: "alert-action" }, action));
  });
  list.replaceChildren(...items);
  $("no-alerts").hidden = items.length > 0;
}

// A card is rebuilt when its table's data (a new object with each update), the language
// or the selection changed; the others stay as they are in the page.
function renderTables() {
  const tables = [...model.tables.values()]
    .sort((a, b) => a.table.localeCompare(b.table, "en", { numeric: true }));
  const cards = tables.map((table) => {
    const selected = detail === table.table;
    const kept = drawn.cards.get(table.table);
    if (kept && kept.table === table && kept.lang === lang && kept.selected === selected) {
      return kept.node;
    }
    const node = card(table);
    drawn.cards.set(table.table, { table, lang, selected, node });
    return node;
  });
  for (const id of [...drawn.cards.keys()]) if (!model.tables.has(id)) drawn.cards.delete(id);
  const grid = $("tables");
  const same = grid.children.length === cards.length
    && tables.every((table, i) => grid.children[i].dataset.table === table.table);
  if (same) {
    cards.forEach((node, i) => { if (grid.children[i] !== node) grid.children[i].replaceWith(node); });
  } else {
    grid.replaceChildren(...cards);
  }
  $("no-tables").hidden = cards.length > 0;
}

function card(table) {
  const state = table.state;
  const offline = table.online === false;
  const classes = ["card"];
  if (offline) classes.push("offline");
  if ((table.alerts || []).some((a) => !a.ack)) classes.push("alerting");
  if (state) classes.push(`phase-${state.phase}`);
  if (detail === table.table) classes.push("selected");
  const badges = [];
  if (offline) badges.push(el("span", { class: "badge offline-badge" }, t("offline")));
  if (state && state.link === "down") badges.push(el("span", { class: "badge warn" }, t("link_down")));
  const stall = (table.alerts || []).find((a) => a.kind === "stalled");
  if (stall) badges.push(el("span", { class: "badge warn stalled-badge" }, alertLabel(stall)));
  const head = el("header", {},
    el("h3", {}, table.table),
    state ? el("span", { class: "rules" }, state.rules) : null,
    ...badges,
    state ? el("span", { class: "phase" }, sub("phases", state.phase)) : null);
  if (!state) return el("article", { class: classes.join(" "), "data-table": table.table }, head);
  const facts = [roundText(state.round), t("honba", state.honba), t("deposits", points(state.deposits))];
  if (typeof state.tiles_left === "number") facts.push(t("tiles", state.tiles_left));
  const clock = clockText(state.clock);
  if (clock) facts.push(t("clock", clock));
  const seats = el("ol", { class: "seats" }, table.seats.map((seat) => el("li", {
    class: `seat rank-${seat.rank}${seat.dealer ? " dealer" : ""}${seat.riichi ? " riichi" : ""}`,
    "data-seat": seat.seat,
  },
  el("span", { class: "wind" }, sub("winds", seat.wind).slice(0, 1)),
  el("span", { class: "name" }, seat.name || sub("winds", seat.wind)),
  el("span", { class: "marks" },
    seat.dealer ? el("span", { class: "mark dealer-mark", title: t("dealer") }, t("dealer")) : null,
    seat.riichi ? el("span", { class: "mark riichi-mark" }, t("riichi")) : null),
  el("span", { class: "score" }, points(seat.score)),
  el("span", { class: "rank" }, rankText(seat.rank)))));
  const children = [head, el("p", { class: "facts" }, facts.join(" · ")), seats];
  if (state.last_hand) children.push(lastHand(table, state.last_hand));
  if (state.finished) children.push(el("p", { class: "finished" }, t("finished")));
  return el("article", {
    class: classes.join(" "), "data-table": table.table, tabindex: 0,
    onclick: () => { detail = detail === table.table ? null : table.table; schedule(); },
    onkeydown: (e) => { if (e.key === "Enter") { detail = table.table; schedule(); } },
  }, ...children);
}

function handSummary(table, hand) {
  const kind = sub("results", hand.kind);
  const winners = (hand.winners || []).map((w) => handSeatLabel(table, hand, w)).join(", ");
  let gains = "";
  if (Array.isArray(hand.deltas) && hand.winners && hand.winners.length) {
    gains = hand.winners.map((w) => signed(hand.deltas[w])).join(" / ");
  }
  const values = (hand.values || []).map(valueText).join(" / ");
  return [kind, winners, gains, values].filter(Boolean).join(" ");
}

function lastHand(table, hand) {
  const where = hand.round ? `${roundText(hand.round)} ${t("honba", hand.honba)}` : "";
  return el("p", { class: "last-hand" },
    el("span", { class: "label" }, t("last_hand")), " ", where, " · ", handSummary(table, hand));
}

function renderDetail() {
  const section = $("detail");
  const table = detail && model.tables.get(detail);
  section.hidden = !table;
  if (!table) {
    drawn.detail = null;
    return;
  }
  const kept = drawn.detail;
  if (kept && kept.table === table && kept.lang === lang && kept.staff === me.staff) return;
  drawn.detail = { table, lang, staff: me.staff };
  $("detail-title").textContent = t("hands_of", table.table);
  const players = table.seats.length || 4;
  // Columns are seats (the players); each cell says the seat's wind in that hand.
  const headRow = el("tr", {}, el("th", {}, t("hand")), el("th", {}, t("round")),
    el("th", {}, t("kind")),
    ...Array.from({ length: players }, (_, s) => el("th", { class: "num", "data-seat": s },
      (table.seats[s] || {}).name || `${t("seat")} ${s}`)));
  const rows = (table.hands || []).map((hand) => el("tr", { "data-hand": hand.hand },
    el("td", {}, hand.hand),
    el("td", {}, hand.round ? `${roundText(hand.round)} ${t("honba", hand.honba)}` : ""),
    el("td", {}, handSummary(table, hand)),
    ...Array.from({ length: players }, (_, s) => el("td", { class: "num", "data-seat": s },
      el("span", { class: `hand-wind${hand.dealer === s ? " hand-dealer" : ""}` },
        sub("winds", handWind(table, hand, s))),
      (hand.riichi || []).includes(s) ? el("span", { class: "mark riichi-mark" }, t("riichi")) : null,
      el("br"),
      Array.isArray(hand.deltas) && hand.deltas[s] ? signed(hand.deltas[s]) : "",
      ...(Array.isArray(hand.chips) && hand.chips[s]
        ? [el("br"), el("small", { class: "chips" }, t("chips", signed(hand.chips[s])))] : []),
      el("br"), el("small", {}, points((hand.scores || [])[s]))))));
  if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: players + 3 }, t("no_hands"))));
  $("hands").replaceChildren(el("thead", {}, headRow), el("tbody", {}, rows));
  renderFaults(table);
  renderControls(table);
  const answer = staffAnswer(table);
  if (answer) $("cmd-answer").textContent = answer;
}

// Staff actions the table takes (its menu), the seats to name and the rules to pick.
// A select keeps what staff chose across the table's updates.
function renderControls(table) {
  $("controls").hidden = !me.staff;
  const menu = table.menu || { rules_menu: [], commands: ["undo", "new_game"] };
  for (const cmd of STAFF_BUTTONS) {
    const button = $(`cmd-${cmd.replace("_", "-")}`);
    setText(button, t(cmd));
    button.hidden = !menu.commands.includes(cmd);
  }
  $("cmd-seat-row").hidden = !SEAT_COMMANDS.some((cmd) => menu.commands.includes(cmd));
  fillSelect($("cmd-seat"), (table.seats || []).map((seat) => [String(seat.seat),
    seatLabel(table, seat.seat)]));
  fillSelect($("cmd-rules"), [["", t("same_rules")], ...menu.rules_menu.map((r) => [r, r])]);
}

function fillSelect(select, options) {
  const chosen = select.value;
  const shown = JSON.stringify(options);
  if (select.dataset.shown === shown) return;
  select.dataset.shown = shown;
  select.replaceChildren(...options.map(([value, label]) => el("option", { value }, label)));
  if (options.some(([value]) => value === chosen)) select.value = chosen;
}

// The faults and stalls the table reported while this page's server listened, newest
// first (the whole history: tablectl journal notes --faults).
function renderFaults(table) {
  const faults = (table.faults || []).slice().reverse();
  $("faults-title").textContent = t("fault_history");
  $("faults-section").hidden = faults.length === 0;
  $("faults").replaceChildren(el("tbody", {}, faults.map((f) => el("tr", { class: `note-${f.type}` },
    el("td", {}, clockOf(f.at)), el("td", {}, sub("fault_notes", f.type)), el("td", {}, f.text)))));
}

// The table's latest answer to game control (a correction, a new game, or why not).
function staffAnswer(table) {
  const events = (table.events || []).filter((e) => e.type === "staff_refused"
    || e.type === "correction" || (e.type === "staff_action" && ANSWERED.includes(e.action)));
  const last = events[events.length - 1];
  if (!last) return "";
  const action = sub("actions", last.type === "correction" ? "correction" : last.action);
  if (last.type === "staff_refused") return t("answer_refused", table.table, action, last.why || "");
  return t("answer_done", table.table, action, last.by || "");
}

async function command(cmd) {
  const table = detail;
  const view = table && model.tables.get(table);
  if (!view) return;
  const rules = cmd === "new_game" ? $("cmd-rules").value : "";
  const seat = SEAT_COMMANDS.includes(cmd) ? Number($("cmd-seat").value) : null;
  const what = seat !== null ? seatLabel(view, seat) : rules || t("same_rules");
  if (!window.confirm(t(`confirm_${cmd}`, table, what))) return;
  try {
    await post("/api/command", { table, cmd, rules, seat });
    $("cmd-answer").textContent = t("cmd_sent", table);
  } catch (error) {
    $("cmd-answer").textContent = t("cmd_failed", error.message);
    if (error.status === 401 || error.status === 403) loadMe();
  }
}

function renderGames() {
  const kept = drawn.games;
  if (kept && kept.games === model.games && kept.lang === lang) return;
  drawn.games = { games: model.games, lang };
  const rows = model.games.map((game) => {
    const when = new Date(game.at * 1000).toLocaleTimeString(lang === "ja" ? "ja-JP" : "en-GB",
      { hour: "2-digit", minute: "2-digit" });
    const places = game.ranking.map((seat, place) => {
      const name = game.names && game.names[seat] ? game.names[seat] : `${t("seat")} ${seat}`;
      const result = game.result ? ` (${signedResult(game.result[seat])})` : "";
      const line = `${rankText(place + 1)} ${name} ${points(game.scores[seat])}${result}`;
      if (!game.money) return el("li", {}, line);
      // A parlor's game settles in P: each seat's P, and its net chips.
      return el("li", { "data-seat": seat }, line, " ",
        el("strong", { class: "money" }, t("money", signed(game.money.total[seat]))), " ",
        el("small", { class: "chips" }, t("chips", signed(game.money.chips[seat]))));
    });
    return el("tr", { "data-game": game.game_id },
      el("td", {}, when), el("td", {}, game.table), el("td", {}, game.rules),
      el("td", { class: "num" }, game.hands ?? ""),
      el("td", {}, el("ol", { class: "places" }, places)),
      el("td", {}, sub("reasons", game.reason)));
  });
  const head = el("tr", {}, ...["time", "table", "rules", "hands", "result", "reason"].map(
    (key) => el("th", {}, t(key))));
  $("games").replaceChildren(el("thead", {}, head), el("tbody", {}, rows));
  $("games").hidden = rows.length === 0;
  $("no-games").hidden = rows.length > 0;
}

// --- the server -----------------------------------------------------------------------

async function post(path, body) {
  const headers = { "Content-Type": "application/json" };
  if (me.csrf) headers["X-CSRF-Token"] = me.csrf;
  const response = await fetch(path, {
    method: "POST", headers, body: JSON.stringify(body), credentials: "same-origin",
  });
  const text = await response.text();
  if (!response.ok) throw Object.assign(new Error(text || response.statusText), { status: response.status });
  return JSON.parse(text);
}

async function loadMe() {
  try {
    const response = await fetch("/api/me", { credentials: "same-origin" });
    me = await response.json();
  } catch (_) {
    return;
  }
  $("password-row").hidden = !me.login_needed;
  $("login-password").required = me.login_needed;
  if (!me.may_view) openLogin();
  else if (!source) connect();
  schedule();
}

async function acknowledge(table, alert) {
  $("ack-error").hidden = true;
  try {
    await post("/api/ack", { table, alert });
  } catch (error) {
    $("ack-error").textContent = t("ack_failed", error.message);
    $("ack-error").hidden = false;
    if (error.status === 401 || error.status === 403) loadMe();
  }
}

function connect() {
  if (source) source.close();
  source = new EventSource("/events");
  source.addEventListener("snapshot", (event) => {
    const data = JSON.parse(event.data);
    model.tables = new Map(data.tables.map((table) => [table.table, table]));
    model.games = data.games;
    model.broker = data.broker;
    model.ledger = data.ledger || null;
    model.stream = true;
    loadMe(); // the dashboard may have restarted, and forgotten every session
    schedule();
  });
  source.addEventListener("update", (event) => {
    const data = JSON.parse(event.data);
    if ("games" in data) model.games = data.games;
    else if ("broker" in data) model.broker = data.broker;
    else if ("ledger" in data) model.ledger = data.ledger;
    else if (data.table) model.tables.set(data.id, data.table);
    else model.tables.delete(data.id);
    schedule();
  });
  source.addEventListener("error", () => {
    model.stream = false;
    schedule();
    if (source.readyState === EventSource.CLOSED) {
      // Refused (not logged in?) or a bad answer: the browser gives up; try ourselves.
      source = null;
      setTimeout(loadMe, 2000);
    }
  });
}

function openLogin() {
  $("login-error").hidden = true;
  if (!$("login").open) $("login").showModal();
  $("login-user").focus();
}

function setup() {
  $("lang").addEventListener("click", () => {
    lang = lang === "ja" ? "en" : "ja";
    localStorage.setItem("tablectl-lang", lang);
    schedule();
  });
  $("login-open").addEventListener("click", openLogin);
  $("login-cancel").addEventListener("click", () => $("login").close());
  $("logout").addEventListener("click", async () => {
    try { await post("/api/logout", {}); } catch (_) { /* gone already */ }
    loadMe();
  });
  $("detail-close").addEventListener("click", () => { detail = null; schedule(); });
  for (const cmd of STAFF_BUTTONS) {
    $(`cmd-${cmd.replace("_", "-")}`).addEventListener("click", () => command(cmd));
  }
  $("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const answer = await post("/api/login", {
        user: $("login-user").value, password: $("login-password").value,
      });
      me = { ...me, ...answer };
      $("login-password").value = "";
      $("login").close();
      loadMe();
    } catch (error) {
      $("login-error").textContent = t("login_failed", error.message);
      $("login-error").hidden = false;
    }
  });
  setInterval(schedule, 15000); // "3 min ago" moves on
  render();
  loadMe();
}

document.addEventListener("DOMContentLoaded", setup);
