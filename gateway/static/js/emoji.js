// Every emoji the client shows is a picture from one set shipped with it (Twemoji, in
// vendor/twemoji/: the 24 signs and the interface's own), never a glyph of the device's emoji
// font. Without such a font (Debian's Chromium, many Linux desktops, older Android for the newer
// code points) every sign is the same empty box, and where fonts exist each platform draws a
// sign its own way: in a game whose one channel is recognising a sign, everyone must see the
// same picture. A picture's accessible name is the emoji's name in the page's language.
import { html } from "./html.js";
import { t } from "./i18n.js";

// R5's 24 signs in the rules' order; engine/signs.py is the reference (tests compare the two).
export const SIGNS = [..."🍍🚀🐢🌵🎸🐙🌙🍉🦜🔥🎩🐝🌻🍄🦀🐘🎲🔔🍋🐸🦉🌈💎🥥"];

// The interface's own pictures. gateway/emoji_vendor.py reads this object to vendor them.
export const ICON = {
  hint: "💡",
  floor: "🎙️",
  sound: "🔊",
  muted: "🔇",
  pause: "⏸️",
  play: "▶️",
  bot: "🤖",
  winners: "🏆",
  watchers: "👁️",
};

const BASE = "/static/vendor/twemoji/";

// Twemoji's name for an emoji: its code points in hex joined by "-", without the emoji
// variation selector U+FE0F (none of ours is a joined sequence, where Twemoji keeps it).
export function emojiCode(emoji) {
  return [...emoji]
    .filter((c) => c !== "\ufe0f")
    .map((c) => c.codePointAt(0).toString(16))
    .join("-");
}

const KNOWN = new Set([...SIGNS, ...Object.values(ICON)].map(emojiCode));

export function hasPicture(value) {
  return typeof value === "string" && value !== "" && KNOWN.has(emojiCode(value));
}

// Through the import map, which names each picture by its version: cached for good.
export function emojiSrc(emoji) {
  return import.meta.resolve(`${BASE}${emojiCode(emoji)}.svg`);
}

// "pineapple", "ananas", "anana", "أناناس": for alt text and for what the live regions say.
export function emojiName(emoji) {
  return hasPicture(emoji) ? t(`emoji.${emojiCode(emoji)}`) : emoji;
}

// One emoji as its picture, sized like the text around it (CSS `.pic`). `label` is its
// accessible name: the emoji's own name unless given; "" when the picture only decorates a
// text that says the same (a button's label, a tag beside a name).
export function Emoji({ e, label, cls = "" }) {
  if (!hasPicture(e)) return html`<span class=${cls}>${e}</span>`;
  return html`<img
    class="pic ${cls}"
    src=${emojiSrc(e)}
    alt=${label ?? emojiName(e)}
    data-pic=${emojiCode(e)}
    draggable="false"
  />`;
}

// Every picture fetched once, early, while the page is idle: the signing grid's 24 pictures and
// the first emissions then come from the cache instead of showing empty squares while they
// load. The images are kept so the document's memory cache keeps them too.
const warmed = [];
export function warmPictures() {
  const go = () => {
    for (const code of KNOWN) {
      const img = new Image();
      img.src = import.meta.resolve(`${BASE}${code}.svg`);
      warmed.push(img);
    }
  };
  if ("requestIdleCallback" in window) requestIdleCallback(go, { timeout: 3000 });
  else setTimeout(go, 500);
}

// A text with every emoji that has a picture drawn as that picture (for strings that may carry
// a sign, such as toasts).
export function pictured(text) {
  if (typeof text !== "string") return text;
  const parts = [];
  let last = 0;
  for (const m of text.matchAll(/\p{Extended_Pictographic}\ufe0f?/gu)) {
    if (!hasPicture(m[0])) continue;
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push(html`<${Emoji} e=${m[0]} />`);
    last = m.index + m[0].length;
  }
  if (last === 0) return text;
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}
