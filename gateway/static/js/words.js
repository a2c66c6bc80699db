// What several pages say the same way: a refusal in the player's language, and a name as typed
// made into the name sent (kept apart from the pages, which import it, so none imports another).
import { t } from "./i18n.js";

export function errorText(err) {
  const code = err?.code || "generic";
  const key = err?.reason ? `err.${code}.${err.reason}` : `err.${code}`;
  const text = t(key);
  return text === key ? t("err.generic") : text;
}

// Whitespace collapsed, never cut (a cut could split a joined emoji and leave a stray joiner):
// a name too long is refused with its own message (`nameProblem`).
export function cleanName(name) {
  return name.replace(/\s+/g, " ").trim();
}
