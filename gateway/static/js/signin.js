// Signing in with a passkey on a new device (issue 36): a passkey made on another brings its
// profile here. On the home page and on a profile page opened without a session.
import { useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { navigate } from "./router.js";
import { toast } from "./toast.js";
import { PasskeyCancelled, passkeyProblem, signInWithPasskey } from "./passkey.js";
import { errorText } from "./words.js";

// Where the browser cannot use a passkey, the panel says why instead of offering one.
export function PasskeySignIn({ onSignedIn = null }) {
  const [busy, setBusy] = useState(false);
  const problem = passkeyProblem();
  async function signIn() {
    setBusy(true);
    try {
      const session = await signInWithPasskey();
      toast(t("passkey.signedIn", { name: session.name }));
      if (onSignedIn) onSignedIn(session);
      else navigate("/profile");
    } catch (err) {
      toast(err instanceof PasskeyCancelled ? t("passkey.cancelled") : errorText(err), "error");
    } finally {
      setBusy(false);
    }
  }
  return html`<div class="panel passkey-sign-in">
    <h2>${t("passkey.signInTitle")}</h2>
    <p>${t("passkey.signInLead")}</p>
    ${problem
      ? html`<p class="muted passkey-problem" data-problem=${problem}>${t(problem, { host: location.hostname })}</p>`
      : html`<button type="button" id="passkey-sign-in" disabled=${busy} onClick=${signIn}>
          ${t("passkey.signIn")}
        </button>`}
  </div>`;
}
