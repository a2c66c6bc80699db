// Languages, message catalogs and plural rules.
//
// Every visible string comes from /static/i18n/<lang>.json. A value is either a string or, for
// words that follow a number, an object keyed by plural category. `{name}`-style placeholders
// are filled by `t()` (plain text, for the live region and titles) or `tx()` (an array of parts,
// so player names can be wrapped in <bdi> by the view).

export const LANGS = ["en", "fr", "ht", "ar"];
export const RTL = new Set(["ar"]);
// The header's language menu: "Kreyòl", as Haitians name their language day to day, since a
// phone's header leaves the menu ~7 characters ("Kreyòl ayisyen" showed cut).
export const NATIVE_NAMES = { en: "English", fr: "Français", ht: "Kreyòl", ar: "العربية" };

// The plural categories each catalog must provide for every plural entry.
export const PLURAL_FORMS = {
  en: ["one", "other"],
  fr: ["one", "other"],
  ht: ["one", "other"],
  ar: ["zero", "one", "two", "few", "many", "other"],
};

const STORE_KEY = "quatro.lang";

// Haitian Creole: nouns do not change with number ("1 pwen", "3 pwen"), and browsers ship no
// rule for `ht`, so ours is written here. "one" exists only so a catalog may say "yon" for 1.
export function pluralHt(n) {
  return n === 1 ? "one" : "other";
}

// Arabic: the six CLDR categories for integers, written out so the client does not depend on
// the browser's CLDR data (and so tests can compare the two).
export function pluralAr(n) {
  const m = Math.abs(n) % 100;
  if (n === 0) return "zero";
  if (n === 1) return "one";
  if (n === 2) return "two";
  if (m >= 3 && m <= 10) return "few";
  if (m >= 11 && m <= 99) return "many";
  return "other";
}

const intlRules = {};
export function pluralCategory(lang, n) {
  if (lang === "ht") return pluralHt(n);
  if (lang === "ar") return pluralAr(n);
  intlRules[lang] ??= new Intl.PluralRules(lang);
  return intlRules[lang].select(n);
}

let lang = "en";
let catalog = {};
let fallback = {};
const listeners = new Set();

export function currentLang() {
  return lang;
}

export function pickLanguage(stored = localStorage.getItem(STORE_KEY)) {
  if (stored && LANGS.includes(stored)) return stored;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (LANGS.includes(base)) return base;
  }
  return "en";
}

// Through the import map, which names each catalog's version (gateway/client_page.py): a
// catalog is then cached for good, and always matches the modules that read it.
async function fetchCatalog(code) {
  const res = await fetch(import.meta.resolve(`/static/i18n/${code}.json`));
  if (!res.ok) throw new Error(`catalog ${code}: ${res.status}`);
  return res.json();
}

export async function setLanguage(code, { remember = false } = {}) {
  if (!LANGS.includes(code)) code = "en";
  const [cat, base] = await Promise.all([
    fetchCatalog(code),
    code === "en" ? null : fetchCatalog("en"),
  ]);
  lang = code;
  catalog = cat;
  fallback = base || cat;
  if (remember) localStorage.setItem(STORE_KEY, code);
  document.documentElement.lang = code;
  document.documentElement.dir = RTL.has(code) ? "rtl" : "ltr";
  document.title = t("app.title");
  document.querySelector('meta[name="description"]')?.setAttribute("content", t("app.description"));
  for (const fn of listeners) fn(code);
}

export function onLanguage(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function lookup(key, vars) {
  let value = catalog[key] ?? fallback[key];
  if (value === undefined) return key;
  if (typeof value === "object") {
    const n = Number(vars?.n ?? 0);
    value = value[pluralCategory(lang, n)] ?? value.other;
  }
  return value;
}

// Digits stay Latin in every language: card ranks are written "10", "9"…, and mixing two digit
// systems on one card table reads worse than using one.
export function formatNumber(n) {
  return String(n);
}

// Values are wrapped in first-strong isolates (U+2068 … U+2069) so a Latin name inside an Arabic
// sentence, or an Arabic name inside a French one, cannot reorder the words around it.
export function t(key, vars = {}) {
  return lookup(key, vars).replace(/\{(\w+)\}/g, (_, name) =>
    !(name in vars) ? `{${name}}` : typeof vars[name] === "number" ? String(vars[name]) : `\u2068${vars[name]}\u2069`,
  );
}

// Like t(), but returns [text, {var, value}, text, ...] so the view can wrap values (names).
export function tx(key, vars = {}) {
  const parts = [];
  const text = lookup(key, vars);
  let last = 0;
  for (const m of text.matchAll(/\{(\w+)\}/g)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push({ var: m[1], value: vars[m[1]] });
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

// A list in the current language's own words and punctuation ("A, B and C", "A, B et C",
// "A، B وC"): `items` with the separators between them, so the view can keep names as
// elements. Browsers have no list rules for Haitian Creole: ours is "A, B ak C".
export function listOf(items) {
  if (items.length < 2) return items.slice();
  if (lang === "ht") {
    return items.flatMap((x, i) => (i === 0 ? [x] : [i === items.length - 1 ? " ak " : ", ", x]));
  }
  const format = new Intl.ListFormat(lang, { style: "long", type: "conjunction" });
  return format
    .formatToParts(items.map((_, i) => String(i)))
    .map((part) => (part.type === "element" ? items[Number(part.value)] : part.value));
}

export function listText(items) {
  return listOf(items).join("");
}

export function clock(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
