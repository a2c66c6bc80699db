// Short synthesized cues (WebAudio, no files to load). Muting is remembered per browser.

const MUTE_KEY = "quatro.muted";
let ctx = null;
let muted = localStorage.getItem(MUTE_KEY) === "1";

const CUES = {
  swap: [[660, 0.06]],
  other: [[440, 0.04]],
  emission: [[880, 0.05], [1175, 0.07]],
  stale: [[180, 0.16]],
  call: [[523, 0.1], [659, 0.1], [784, 0.18]],
  vote: [[587, 0.08], [587, 0.08]],
  round: [[392, 0.08], [523, 0.12]],
};

export function isMuted() {
  return muted;
}

export function setMuted(value) {
  muted = value;
  localStorage.setItem(MUTE_KEY, value ? "1" : "0");
}

export function play(name) {
  if (muted || !CUES[name]) return;
  try {
    ctx ??= new AudioContext();
    if (ctx.state === "suspended") ctx.resume();
    let t = ctx.currentTime;
    for (const [freq, dur] of CUES[name]) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = freq;
      osc.type = "triangle";
      gain.gain.setValueAtTime(0.0001, t);
      gain.gain.exponentialRampToValueAtTime(0.15, t + 0.01);
      gain.gain.exponentialRampToValueAtTime(0.0001, t + dur);
      osc.connect(gain).connect(ctx.destination);
      osc.start(t);
      osc.stop(t + dur + 0.02);
      t += dur;
    }
  } catch {
    // No audio device (or autoplay policy): cues are a bonus, never a requirement.
  }
}
