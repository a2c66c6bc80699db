// Entry point: pick the language, then mount the app.
import { render } from "preact";
import { html } from "./html.js";
import { App } from "./app.js";
import { pickLanguage, setLanguage } from "./i18n.js";
import { warmPictures } from "./emoji.js";

await setLanguage(pickLanguage());
const root = document.getElementById("app");
root.textContent = "";
render(html`<${App} />`, root);
warmPictures();
