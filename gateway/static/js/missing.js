// An address where the client draws no page (the gateway answers it 404, with this page): said
// plainly, with the ways to the pages there are.
import { html } from "./html.js";
import { t } from "./i18n.js";
import { loadSession } from "./api.js";
import { PagesNav } from "./lobby.js";

export function Missing() {
  return html`<section class="panel missing" aria-labelledby="missing-title">
    <h1 id="missing-title">${t("missing.title")}</h1>
    <p>${t("missing.lead")}</p>
    <${PagesNav} signedIn=${Boolean(loadSession())} here="missing" />
  </section>`;
}
