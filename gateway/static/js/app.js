// The shell: header (language, sound, help), routing between the pages (router.js lists them;
// the gateway serves this page at each), and toasts.
import { useEffect, useState } from "preact/hooks";
import { html } from "./html.js";
import { LANGS, NATIVE_NAMES, currentLang, onLanguage, setLanguage, t } from "./i18n.js";
import { isMuted, setMuted } from "./sound.js";
import { Home } from "./lobby.js";
import { TableRoute } from "./game.js";
import { ReplayRoute } from "./replay.js";
import { Missing } from "./missing.js";
import { ProfileRoute } from "./profile.js";
import { LeaderboardRoute } from "./leaderboard.js";
import { navigate, route } from "./router.js";
import { Toasts } from "./toast.js";
import { Emoji, ICON } from "./emoji.js";
import { OfflineBanner, useOnline } from "./offline.js";

function Header() {
  const [muted, setM] = useState(isMuted());
  const lang = currentLang();
  return html`<header class="topbar">
    <a class="brand" href="/" onClick=${(e) => (e.preventDefault(), navigate("/"))}>
      <span aria-hidden="true">🂡</span> Quatro
    </a>
    <nav class="tools" aria-label=${t("nav.tools")}>
      <a class="tool" href=${`/static/help/${lang}.html`} target="_blank" rel="noopener">
        ${t("nav.help")}
      </a>
      <button
        class="tool"
        type="button"
        aria-pressed=${muted ? "true" : "false"}
        onClick=${() => (setMuted(!muted), setM(!muted))}
      >
        <${Emoji} e=${muted ? ICON.muted : ICON.sound} label="" />
        <span class="visually-hidden">${t("nav.mute")}</span>
      </button>
      <label class="tool lang">
        <span class="visually-hidden">${t("nav.language")}</span>
        <select
          value=${lang}
          onChange=${(e) => setLanguage(e.currentTarget.value, { remember: true })}
        >
          ${LANGS.map(
            (code) => html`<option value=${code} lang=${code}>${NATIVE_NAMES[code]}</option>`,
          )}
        </select>
      </label>
    </nav>
  </header>`;
}

export function App() {
  const [where, setWhere] = useState(route());
  const [, setLang] = useState(currentLang());
  const online = useOnline();
  useEffect(() => {
    const onNav = () => setWhere(route());
    window.addEventListener("popstate", onNav);
    window.addEventListener("quatro:navigate", onNav);
    const off = onLanguage(setLang);
    return () => {
      window.removeEventListener("popstate", onNav);
      window.removeEventListener("quatro:navigate", onNav);
      off();
    };
  }, []);
  return html`
    <${Header} />
    <main id="main">
      ${!online && where.name !== "table" && html`<${OfflineBanner} />`}
      ${where.name === "table"
        ? html`<${TableRoute} key=${where.code} code=${where.code} />`
        : where.name === "replay"
          ? html`<${ReplayRoute} key=${where.id} id=${where.id} />`
          : where.name === "profile"
            ? html`<${ProfileRoute} key=${where.id || "me"} id=${where.id} />`
            : where.name === "leaderboard"
              ? html`<${LeaderboardRoute} key=${where.players} players=${where.players} />`
              : where.name === "missing"
                ? html`<${Missing} />`
                : html`<${Home} />`}
    </main>
    <${Toasts} />
  `;
}
