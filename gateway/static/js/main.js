// Entry point: pick the language, then mount the app; then the service worker for offline use.
import { render } from "preact";
import { html } from "./html.js";
import { App } from "./app.js";
import { pickLanguage, setLanguage } from "./i18n.js";
import { warmPictures } from "./emoji.js";
import { registerServiceWorker } from "./offline.js";

await setLanguage(pickLanguage());
const root = document.getElementById("app");
root.textContent = "";
render(html`<${App} />`, root);
warmPictures();
registerServiceWorker();
