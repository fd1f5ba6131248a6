// tablectl dashboard: seating players at a table for its next game (docs/seating.md).
// Loaded after app.js, whose helpers ($, el, post, model, me, detail, lang) it uses; it
// draws itself under the table's game control through app.js's renderHooks.
"use strict";

const SEATING_I18N = {
  en: {
    title: "Players for the next game",
    hint: "A member number, a name, or empty for a guest. Players change between games only.",
    placeholder: "member no. or name",
    seat: "Seat players", clear: "Table's own names",
    confirm: "Seat these players at {0} for the next game?",
    confirm_clear: "Give {0} its own seat names again?",
    sent: "Sent to {0}; waiting for the table.", failed: "Not seated: {0}",
    done: "{0}: players seated by {1}", refused: "{0} refused the seating: {1}",
  },
  ja: {
    title: "次の対局の着席",
    hint: "会員番号、名前、または空欄でゲスト。着席の変更は対局の間だけです。",
    placeholder: "会員番号または名前",
    seat: "着席させる", clear: "卓の既定の名前に戻す",
    confirm: "{0} の次の対局にこの顔ぶれで着席させますか?",
    confirm_clear: "{0} の席名を既定に戻しますか?",
    sent: "{0} に送信しました。卓の応答を待っています。", failed: "着席できません: {0}",
    done: "{0}: {1} が着席を変更", refused: "{0} が着席を拒否: {1}",
  },
};

function seatingText(key, ...args) {
  const text = (SEATING_I18N[lang] || SEATING_I18N.en)[key] || SEATING_I18N.en[key] || key;
  return String(text).replace(/\{(\d)\}/g, (_, i) => String(args[Number(i)]));
}

const seatingDrawn = { table: null, lang: null, players: 0 };

// The table's latest answer to a seating: done (staff_action seat) or why not.
function seatingAnswer(table) {
  const events = (table.events || []).filter((e) => e.action === "seat"
    && (e.type === "staff_action" || e.type === "staff_refused"));
  const last = events[events.length - 1];
  if (!last) return null;
  if (last.type === "staff_refused") return seatingText("refused", table.table, last.why || "");
  return seatingText("done", table.table, last.by || "");
}

function renderSeating() {
  let box = $("seating");
  if (!box) {
    box = el("div", { id: "seating", class: "seating", hidden: true });
    $("controls").after(box);
  }
  const table = detail && model.tables.get(detail);
  box.hidden = !table || !me.staff;
  if (box.hidden) {
    seatingDrawn.table = null;
    return;
  }
  const players = table.seats.length || 4;
  if (seatingDrawn.table !== table.table || seatingDrawn.lang !== lang
      || seatingDrawn.players !== players) {
    // Rebuilt only when the table or the language changes: typing survives updates.
    Object.assign(seatingDrawn, { table: table.table, lang, players });
    const inputs = Array.from({ length: players }, (_, s) => el("label", { class: "seat-field" },
      el("span", {}, seatLabel(table, s)),
      el("input", { id: `seat-input-${s}`, maxlength: 32, autocomplete: "off",
        placeholder: seatingText("placeholder") })));
    box.replaceChildren(
      el("h3", {}, seatingText("title")),
      el("p", { class: "quiet" }, seatingText("hint")),
      el("div", { class: "seat-fields" }, inputs),
      el("button", { type: "button", id: "seat-submit", onclick: () => seatPlayers(false) },
        seatingText("seat")),
      el("button", { type: "button", id: "seat-clear", onclick: () => seatPlayers(true) },
        seatingText("clear")),
      el("p", { id: "seat-answer", "aria-live": "polite" }));
  }
  const answer = seatingAnswer(table);
  if (answer) setText($("seat-answer"), answer);
}

async function seatPlayers(clear) {
  const table = detail;
  if (!table) return;
  const seats = Array.from({ length: seatingDrawn.players },
    (_, s) => $(`seat-input-${s}`).value.trim());
  if (!window.confirm(seatingText(clear ? "confirm_clear" : "confirm", table))) return;
  try {
    await post("/api/seat", clear ? { table, clear: true } : { table, seats });
    $("seat-answer").textContent = seatingText("sent", table);
  } catch (error) {
    $("seat-answer").textContent = seatingText("failed", error.message);
    if (error.status === 401 || error.status === 403) loadMe();
  }
}

renderHooks.push(renderSeating);
