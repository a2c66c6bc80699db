// Working without the network: the service worker (/sw.js, gateway/static/sw.js) that keeps the
// client's shell, so a reload while offline still opens Quatro; and what the page says when the
// device is offline. A seat is never lost to a lost network (R24: the seat and the hand stay,
// nobody plays for the player), and the table's socket comes back by itself: the page says so,
// beside the link's usual "Reconnecting…".
import { useEffect, useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";

// After the page has loaded, so the worker's first filling of its cache never competes with
// the page's own requests. A browser without service workers (or a refusal: private modes, a
// file:// page) simply works online only.
export function registerServiceWorker() {
  if (!("serviceWorker" in navigator)) return;
  const register = () => navigator.serviceWorker.register("/sw.js").catch(() => {});
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register, { once: true });
}

// Whether the device says it is online; `onBack` runs when it comes back (to reconnect at once
// rather than at the next backoff step).
export function useOnline(onBack) {
  const [online, setOnline] = useState(navigator.onLine);
  useEffect(() => {
    const up = () => {
      setOnline(true);
      onBack?.();
    };
    const down = () => setOnline(false);
    window.addEventListener("online", up);
    window.addEventListener("offline", down);
    return () => {
      window.removeEventListener("online", up);
      window.removeEventListener("offline", down);
    };
  }, []);
  return online;
}

// Offline, where no seat is at stake (a table's page with a seat says so in its link banner).
export function OfflineBanner() {
  return html`<div class="banner offline" role="status" data-conn="offline">
    <span>${t("offline.waiting")}</span>
  </div>`;
}
