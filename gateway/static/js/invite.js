// The invite to a table: its code and link, the system share sheet where the browser has one, a
// copy button that still works without the async clipboard, and a QR code to scan from a phone.
import { useMemo, useRef, useState } from "preact/hooks";
import qrcode from "qrcode-generator";
import { html } from "./html.js";
import { t } from "./i18n.js";

// The dark modules of `text`'s QR code as one SVG path, one unit per module, inside a quiet
// zone of 4 modules (what scanners expect).
function qrPath(text) {
  const qr = qrcode(0, "M");
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  let d = "";
  for (let r = 0; r < n; r += 1) {
    for (let c = 0; c < n; c += 1) {
      if (qr.isDark(r, c)) d += `M${c + 4} ${r + 4}h1v1h-1z`;
    }
  }
  return { d, size: n + 8 };
}

function QrCode({ link, code }) {
  const { d, size } = useMemo(() => qrPath(link), [link]);
  return html`<svg
    class="qr"
    viewBox=${`0 0 ${size} ${size}`}
    role="img"
    aria-label=${t("invite.qrLabel", { code })}
    shape-rendering="crispEdges"
  >
    <rect width=${size} height=${size} fill="#fff" />
    <path d=${d} fill="#000" />
  </svg>`;
}

async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No async clipboard (plain http, an old browser, permission refused): the old way.
    input?.focus();
    input?.select();
    try {
      return document.execCommand("copy");
    } catch {
      return false;
    }
  }
}

export function InviteBox({ code }) {
  const link = `${location.origin}/t/${code}`;
  const [copy, setCopy] = useState(""); // "", "done" or "failed"
  const canShare = typeof navigator.share === "function";
  const linkField = useRef(null);
  // The QR code is made when first shown: its encoder tries all eight masks, the longest task
  // of a table page's load, for a picture most players never open.
  const [qrOpen, setQrOpen] = useState(false);

  async function onCopy() {
    const ok = await copyText(link, linkField.current);
    setCopy(ok ? "done" : "failed");
    setTimeout(() => setCopy(""), 4000);
  }

  async function onShare() {
    try {
      await navigator.share({ title: t("invite.shareTitle"), text: t("invite.shareText", { code }), url: link });
    } catch {
      // Closed without sharing: nothing to say.
    }
  }

  return html`<div class="invite panel">
    <p>
      ${t("lobby.code")} <strong class="code" data-code=${code}>${code}</strong>
    </p>
    <div class="row">
      <label class="visually-hidden" for="invite-link">${t("lobby.inviteLabel")}</label>
      <input id="invite-link" ref=${linkField} dir="ltr" readonly value=${link} onFocus=${(e) => e.currentTarget.select()} />
      ${canShare &&
      html`<button type="button" id="invite-share" class="primary" onClick=${onShare}>
        ${t("invite.share")}
      </button>`}
      <button type="button" id="invite-copy" onClick=${onCopy}>${t("lobby.copy")}</button>
    </div>
    <p class="invite-said" role="status">
      ${copy === "done" ? t("lobby.copied") : copy === "failed" ? t("invite.copyFailed") : ""}
    </p>
    <details class="invite-qr" onToggle=${(e) => e.currentTarget.open && setQrOpen(true)}>
      <summary>${t("invite.qrShow")}</summary>
      ${qrOpen && html`<${QrCode} link=${link} code=${code} />`}
    </details>
  </div>`;
}
