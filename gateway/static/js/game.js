// One table's page: what `useTable` (usetable.js) knows of it, drawn. Before a seat, the seat
// list (or, once the match is on, the way to watch it); then the lobby or the table itself.
import { useRef } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { NameField, SeatsPanel } from "./lobby.js";
import { TableView } from "./table.js";
import { navigate } from "./router.js";
import { useTable } from "./usetable.js";
import { OfflineBanner, useOnline } from "./offline.js";

export function TableRoute({ code }) {
  const nameRef = useRef(null);
  const {
    mode,
    game,
    status,
    summary,
    name,
    setName,
    flash,
    wasOnline,
    retryNow,
    take,
    lobbyAction,
    watch,
    stopWatching,
    actions,
  } = useTable(code, { onBadName: () => nameRef.current?.focus() });
  // Back online: a dead link tries again at once rather than at its next backoff step.
  const linkStatus = useRef(status);
  linkStatus.current = status;
  const online = useOnline(() => linkStatus.current !== "online" && retryNow());

  // The device offline: a player with a seat here (or coming back to one) is told that it is
  // kept, even before the first hello (a reload without network, the page coming from the
  // service worker); anyone else that Quatro carries on when the network returns.
  const seat = mode === "seated" || mode === "connecting";
  const banner =
    !online && !seat && mode !== "watching"
      ? html`<${OfflineBanner} />`
      : html`<${ConnectionBanner}
          status=${status}
          show=${((mode === "seated" || mode === "watching") && wasOnline) || (!online && seat)}
          note=${!online && seat ? t("offline.seatKept") : null}
          onRetry=${retryNow}
        />`;

  if (mode === "missing") {
    return html`<section class="panel center-text" role="alert">
      <h1>${t("err.unknown_table")}</h1>
      <button type="button" onClick=${() => navigate("/")}>${t("nav.home")}</button>
    </section>`;
  }
  if (mode === "unseated") {
    if (!summary) return html`${banner}<p class="loading" role="status">${t("status.loading")}</p>`;
    if (summary.phase !== "lobby") {
      // Bots hold seats and the host lets people join late: watching is the way to a seat.
      const closed = summary.settings?.watchers === false;
      const botSeats = summary.seats.filter((s) => s.kind === "bot").length;
      const late =
        !closed && botSeats > 0 && summary.phase !== "over" && summary.settings?.late_join !== "never";
      return html`<section class="panel center-text" data-late=${late ? "yes" : "no"}>
        <h1>${late ? t("late.started", { n: botSeats }) : t("lobby.started")}</h1>
        ${closed
          ? html`<p id="watch-closed">${t("watch.closed")}</p>`
          : html`<p>${late ? t("late.startLead") : t("watch.lead")}</p>`}
        ${late && html`<${NameField} value=${name} onInput=${setName} inputRef=${nameRef} />`}
        <p>
          ${summary.settings?.watchers !== false &&
          html`<button type="button" id="watch-btn" class="primary" onClick=${watch}>
            ${t("watch.button")}
          </button>`}
          <button type="button" onClick=${() => navigate("/")}>${t("nav.home")}</button>
        </p>
      </section>`;
    }
    return html`<${SeatsPanel}
      code=${code}
      table=${summary}
      mySeat=${null}
      onTake=${take}
      onAction=${lobbyAction}
      name=${name}
      setName=${setName}
      nameRef=${nameRef}
    />`;
  }
  if (!game) return html`${banner}<p class="loading" role="status">${t("status.connecting")}</p>`;
  if (game.table.phase === "lobby") {
    return html`${banner}<${SeatsPanel}
        code=${code}
        table=${game.table}
        mySeat=${game.you.seat}
        onTake=${take}
        onAction=${lobbyAction}
        name=${name}
        setName=${setName}
        nameRef=${nameRef}
      />`;
  }
  return html`${banner}<${TableView}
      game=${game}
      actions=${actions}
      flash=${flash}
      status=${status}
      onStopWatching=${stopWatching}
    />`;
}

// `note`: said after "Reconnecting…" (the device is offline). The banner comes with the link's
// own state, as the disabled controls do: a network cut the page has not noticed yet says
// nothing.
function ConnectionBanner({ status, show, note, onRetry }) {
  if (!show || status === "online") return null;
  if (status === "replaced") {
    return html`<div class="banner warn" role="alert">
      <span>${t("conn.replaced")}</span>
      <button type="button" onClick=${onRetry}>${t("conn.useHere")}</button>
    </div>`;
  }
  return html`<div class="banner" role="status" data-conn=${note ? "offline" : status}>
    <span class="spinner" aria-hidden="true"></span>
    <span>${t("conn.lost")}${note && ` ${note}`}</span>
    <button type="button" onClick=${onRetry}>${t("conn.retry")}</button>
  </div>`;
}
