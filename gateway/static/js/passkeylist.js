// The profile's passkeys (issue 36; issue 46, point 4): each listed by a label that tells the
// owner's devices apart and the day it was added, renamed in place, and removed only once the
// owner confirms it, in the page (a browser's confirm() box is modal, unstyled and speaks the
// browser's language, not the page's). A new one is added where the browser can use passkeys;
// elsewhere the panel says why (passkey.js, passkeyProblem).
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.js";
import { t } from "./i18n.js";
import { api } from "./api.js";
import { toast } from "./toast.js";
import { errorText } from "./words.js";
import { PasskeyCancelled, addPasskey, passkeyProblem } from "./passkey.js";

// What the server takes (gateway/names.py, check_label): 1-40 characters once whitespace is
// collapsed. Counted here by code points, which is never fewer than what a reader sees: the
// server's count of visible characters has the last word.
const LABEL_MOST = 40;

export function labelProblem(label) {
  const clean = label.split(/\s+/).filter(Boolean).join(" ");
  return clean && [...clean].length <= LABEL_MOST ? null : "passkey.labelProblem";
}

// `day`: how the profile writes a date (profile.js, which draws this panel).
export function Passkeys({ token, keys, reload, day }) {
  const [busy, setBusy] = useState(false);
  // One line at a time is renamed or asked about: {id, mode: "rename" | "remove"}.
  const [open, setOpen] = useState(null);
  const list = useRef(null);
  // After a line closes, focus goes back to the button that opened it (or, the line gone, to
  // the panel's heading), never to the page's body.
  const back = useRef(null);
  useEffect(() => {
    if (open || !back.current) return;
    const { id, mode } = back.current;
    back.current = null;
    const button = list.current?.querySelector(`[data-passkey='${id}'] [data-open='${mode}']`);
    (button || document.getElementById("passkeys-title"))?.focus();
  }, [open, keys]);
  function close(id, mode) {
    back.current = { id, mode };
    setOpen(null);
  }

  async function add() {
    setBusy(true);
    try {
      await addPasskey(token);
      toast(t("passkey.added"));
      await reload();
    } catch (err) {
      toast(err instanceof PasskeyCancelled ? t("passkey.cancelled") : errorText(err), "error");
    } finally {
      setBusy(false);
    }
  }
  const problem = passkeyProblem();
  return html`<section class="panel passkeys" aria-labelledby="passkeys-title">
    <h2 id="passkeys-title" tabindex="-1">${t("passkey.title")}</h2>
    <p>${t("passkey.lead")}</p>
    ${keys.length === 0
      ? html`<p class="muted">${t("passkey.none")}</p>`
      : html`<ul class="passkey-list" ref=${list}>
          ${keys.map(
            (k) => html`<${PasskeyLine}
              key=${k.id}
              passkey=${k}
              token=${token}
              day=${day}
              mode=${open?.id === k.id ? open.mode : null}
              onOpen=${(mode) => setOpen({ id: k.id, mode })}
              onClose=${(mode) => close(k.id, mode)}
              reload=${reload}
            />`,
          )}
        </ul>`}
    ${problem
      ? html`<p class="muted passkey-problem" data-problem=${problem}>
          ${t(problem, { host: location.hostname })}
        </p>`
      : html`<button type="button" class="primary" id="add-passkey" disabled=${busy} onClick=${add}>
          ${t("passkey.add")}
        </button>`}
  </section>`;
}

function PasskeyLine({ passkey, token, day, mode, onOpen, onClose, reload }) {
  const k = passkey;
  const labelId = `passkey-label-${k.id}`;
  return html`<li data-passkey=${k.id} class=${mode ? `passkey-line ${mode}` : "passkey-line"}>
    ${mode === "rename"
      ? html`<${RenameForm} passkey=${k} token=${token} onDone=${() => onClose("rename")} reload=${reload} />`
      : html`<span class="passkey-what">
            <bdi class="passkey-label" id=${labelId}>${k.label}</bdi>
            ${" "}<span class="muted">${t("passkey.created", { date: day(k.created) })}</span>
          </span>
          ${mode === "remove"
            ? html`<${RemoveAsk} passkey=${k} token=${token} onDone=${() => onClose("remove")} reload=${reload} />`
            : html`<span class="row passkey-buttons">
                <button type="button" class="link" data-open="rename" aria-describedby=${labelId} onClick=${() => onOpen("rename")}>
                  ${t("passkey.rename")}
                </button>
                <button type="button" class="link" data-open="remove" aria-describedby=${labelId} onClick=${() => onOpen("remove")}>
                  ${t("passkey.remove")}
                </button>
              </span>`}`}
  </li>`;
}

function RenameForm({ passkey, token, onDone, reload }) {
  const [label, setLabel] = useState(passkey.label);
  const [error, setError] = useState("");
  const field = useRef(null);
  const inputId = `passkey-rename-${passkey.id}`;
  useEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, []);
  async function save(e) {
    e.preventDefault();
    const problem = labelProblem(label);
    if (problem) return setError(t(problem));
    try {
      await api.renamePasskey(token, passkey.id, label);
    } catch (err) {
      return setError(err.status === 422 ? t("passkey.labelProblem") : errorText(err));
    }
    toast(t("passkey.renamed"));
    await reload();
    onDone();
  }
  return html`<form class="passkey-rename" onSubmit=${save} onKeyDown=${(e) => e.key === "Escape" && onDone()}>
    <label for=${inputId}>${t("passkey.labelField")}</label>
    <input
      id=${inputId}
      class="passkey-label-field"
      ref=${field}
      type="text"
      autocomplete="off"
      maxlength="100"
      value=${label}
      aria-invalid=${error ? "true" : "false"}
      aria-describedby=${error ? `${inputId}-error` : null}
      onInput=${(e) => setLabel(e.currentTarget.value)}
    />
    <span class="row">
      <button type="submit" class="primary" data-rename="save">${t("passkey.save")}</button>
      <button type="button" data-rename="cancel" onClick=${onDone}>${t("common.cancel")}</button>
    </span>
    ${error && html`<p class="error" role="alert" id=${`${inputId}-error`}>${error}</p>`}
  </form>`;
}

function RemoveAsk({ passkey, token, onDone, reload }) {
  const keep = useRef(null);
  // The safe answer has focus: Enter pressed once more keeps the passkey.
  useEffect(() => keep.current?.focus(), []);
  async function remove() {
    try {
      await api.removePasskey(token, passkey.id);
    } catch (err) {
      toast(errorText(err), "error");
      return onDone();
    }
    toast(t("passkey.removed"));
    await reload();
    onDone();
  }
  return html`<div
    class="passkey-remove"
    role="group"
    aria-labelledby=${`passkey-ask-${passkey.id}`}
    onKeyDown=${(e) => e.key === "Escape" && onDone()}
  >
    <p id=${`passkey-ask-${passkey.id}`}>${t("passkey.removeAsk", { label: passkey.label })}</p>
    <span class="row">
      <button type="button" class="danger" data-remove="confirm" onClick=${remove}>
        ${t("passkey.removeConfirm")}
      </button>
      <button type="button" data-remove="keep" ref=${keep} onClick=${onDone}>${t("passkey.keep")}</button>
    </span>
  </div>`;
}
