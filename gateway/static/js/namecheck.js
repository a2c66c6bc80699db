// What the name field may send, as gateway/names.py judges it: 1–24 characters as a reader
// counts them (a joined emoji such as 👨‍👩‍👧‍👦 is one), at most 64 code points. Fillers and
// bidi controls are left for the server to refuse, with its own answer worded by the client.
export const MAX_NAME = 24;
export const MAX_CODE_POINTS = 64;

// Made on first use: building the segmenter loads ICU's break rules, tens of milliseconds on a
// phone, and the page's first render never needs it.
let segmenter;

export function visibleLength(name) {
  if (segmenter === undefined) {
    segmenter = typeof Intl.Segmenter === "function" ? new Intl.Segmenter() : null;
  }
  if (segmenter) return [...segmenter.segment(name)].length;
  return [...name.replace(/\u200d\p{Extended_Pictographic}|[\ufe0f\u{1f3fb}-\u{1f3ff}\u{e0020}-\u{e007f}]|\p{M}/gu, "")].length;
}

// The catalog key of what is wrong with a cleaned name, or null.
export function nameProblem(clean) {
  if (!clean) return "err.name_required";
  if (visibleLength(clean) > MAX_NAME || [...clean].length > MAX_CODE_POINTS) return "err.name_long";
  return null;
}
